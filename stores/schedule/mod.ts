import type { Redis } from 'ioredis'
import type { ScheduleLedger } from './ledger.ts'
import { SCHEDULE_LUA } from './schedule.lua.ts'

export { ScheduleLedger, type LedgerEntry } from './ledger.ts'

/**
 * The schedule state of a scheduled message, in the Redis hash `ob:sched:<msg_id>`:
 *   state   absent while it waits, `canceled` once cancelled, `taken` once the engine took it up to send it
 *   at      the time it is due (epoch ms) when it was rescheduled; absent: the queued message's `scheduled_at`
 *   seq     the stream sequence of the first copy the engine saw waiting (a reschedule to an earlier time wakes it)
 *   holder  the stream sequence of the copy that was taken up: any other copy of the message is dropped
 *
 * The queued message is immutable, so a cancel or a new time lives here. The gateway cancels and reschedules, the
 * engine takes; each is one atomic script, so a cancel answered `ok` means the message is never taken, and a
 * message already taken makes a cancel a `conflict`. Only this module names the key and the fields.
 *
 * Redis may lose this hash (a flush, a new server without its files), so a cancel or new time the gateway
 * answered for is also written to the ScheduleLedger (JetStream KV) before the answer, and the engine reads the
 * ledger before every take: a cancel the ledger holds is a cancel, and a new time it holds stands in for the
 * one Redis lost. A reschedule is refused when the ledger holds a cancel that Redis forgot.
 */
export const SCHEDULE_STATE_TTL_MS = 10 * 24 * 3600_000 // longer than the 72 h a send may be scheduled ahead, plus the retry span

export function scheduleStateKey (messageId: string): string {
  return `ob:sched:${messageId}`
}

/** What the engine does with a scheduled message it holds. */
export type TakeVerdict =
  /** Send it; `dueAt` is the time it became due (the last reschedule's, else the queued `scheduled_at`). */
  | { kind: 'taken', dueAt: number }
  | { kind: 'canceled' }
  /** Another copy of the message (published when it was rescheduled earlier) was taken up: drop this one. */
  | { kind: 'duplicate' }
  | { kind: 'wait', at: number }

export type ChangeVerdict = { kind: 'ok' } | { kind: 'conflict' }
export type RescheduleVerdict = { kind: 'ok', waitingSeq?: number } | { kind: 'conflict' }

type ScheduleRedis = Redis & { ob_schedule: (numKeys: number, ...args: Array<string | number>) => Promise<string[]> }

export class ScheduleState {
  private readonly r: ScheduleRedis

  constructor (redis: Redis, private readonly ledger: ScheduleLedger) {
    const r = redis as ScheduleRedis
    if (typeof (r as Partial<ScheduleRedis>).ob_schedule !== 'function') redis.defineCommand('ob_schedule', { lua: SCHEDULE_LUA })
    this.r = r
  }

  /**
   * Engine, right before it takes a scheduled message up: whether it is due, cancelled, or a copy another delivery
   * took. `seq` is the stream sequence of the copy in hand; `scheduledAt` the queued message's time (ms).
   */
  async take (messageId: string, seq: number, scheduledAt: number, now: number): Promise<TakeVerdict> {
    const decided = await this.ledger.read(messageId)
    const key = scheduleStateKey(messageId)
    const [kind, at] = await this.r.ob_schedule(1, key, 'take', SCHEDULE_STATE_TTL_MS, seq, scheduledAt, now, decided ?? '')
    if (kind === 'wait') return { kind, at: Number(at) }
    if (kind === 'taken') return { kind, dueAt: Number(at) }
    return { kind: kind as 'canceled' | 'duplicate' }
  }

  /**
   * Sweep: whether a cancel of the message won, as the ledger or Redis holds it. Reads only: a canceled message is
   * never sent, so a stored copy of it is done, whether or not its time has come.
   */
  async isCanceled (messageId: string): Promise<boolean> {
    if (await this.ledger.read(messageId) === 'canceled') return true
    return await this.r.hget(scheduleStateKey(messageId), 'state') === 'canceled'
  }

  /** Gateway: cancels unless the engine took the message up already. Cancelling twice is `ok` both times. */
  async cancel (messageId: string): Promise<ChangeVerdict> {
    const [kind] = await this.r.ob_schedule(1, scheduleStateKey(messageId), 'cancel', SCHEDULE_STATE_TTL_MS)
    if (kind !== 'ok') return { kind: 'conflict' }
    await this.ledger.canceled(messageId)
    return { kind }
  }

  /**
   * Gateway: a new due time unless the message was taken up or cancelled. `waitingSeq` is the copy the engine holds
   * back (it comes back at the time it was last told): an earlier time needs a fresh copy to wake it.
   */
  async reschedule (messageId: string, at: number): Promise<RescheduleVerdict> {
    if (await this.ledger.read(messageId) === 'canceled') return { kind: 'conflict' }
    const [kind, seq] = await this.r.ob_schedule(1, scheduleStateKey(messageId), 'reschedule', SCHEDULE_STATE_TTL_MS, at)
    if (kind !== 'ok') return { kind: 'conflict' }
    await this.ledger.rescheduled(messageId, at)
    return seq !== undefined && seq !== '' ? { kind, waitingSeq: Number(seq) } : { kind }
  }
}
