import type { Redis } from 'ioredis'
import { deliveryStateKey, type EventRecord } from '../protocol/mod.ts'
import { TurnBatch } from '../stores/batching/mod.ts'
import type { RecipientResult } from './actor/task.ts'

/**
 * The layout of a message's delivery state: per-recipient progress in the Redis hash `ob:done:<msg_id>`
 * (7 days), so a redelivered JetStream message never sends twice to a recipient that already has a final outcome:
 *   s:<rcpt>  the final SMTP reply (RecipientResult JSON), written by the shard thread as soon as it arrives
 *   d:<rcpt>  the recipient's final events (JSON array)  — set before those events are published
 *   p:<rcpt>  "1" once those events were published      — a redelivery re-publishes them when missing
 *   a:<rcpt>  attempts that ended deferred
 *   n:<rcpt>  not before (epoch ms): the next attempt's time (retry schedule or destination throttle)
 *   v:<rcpt>  the mailbox provider of its domain, once an attempt looked it up (engine/queue_holds.ts)
 *
 * Only this module names the key and the fields. It is plain data and functions, so the shard threads use it
 * too; each thread writes on its own Redis connection (the main thread through `DeliveryState`).
 */
export const DELIVERY_STATE_TTL_S = 7 * 24 * 3600

export { deliveryStateKey }

export interface RecipientState {
  /** A final SMTP reply recorded by the thread whose events were not yet written (crash in between). */
  sent?: RecipientResult
  final?: EventRecord[]
  published: boolean
  attempts: number
  notBefore: number
  /** The provider an attempt found for its domain (docs/egress.md), for the operator's holds and queues. */
  provider?: string
}

/** The state of a recipient nothing was recorded for. */
export function freshRecipientState (): RecipientState {
  return { published: false, attempts: 0, notBefore: 0 }
}

const SENT = 's:'
const FINAL = 'd:'
const PUBLISHED = 'p:'
const ATTEMPTS = 'a:'
const NOT_BEFORE = 'n:'
const PROVIDER = 'v:'

/** The hash's fields read back per recipient (a recipient without fields has none). */
export function parseDeliveryState (raw: Readonly<Record<string, string>>): Map<string, RecipientState> {
  const out = new Map<string, RecipientState>()
  const get = (rcpt: string): RecipientState => {
    let s = out.get(rcpt)
    if (s === undefined) out.set(rcpt, s = freshRecipientState())
    return s
  }
  for (const [field, value] of Object.entries(raw)) {
    const rcpt = field.slice(2)
    switch (field.slice(0, 2)) {
      case SENT: get(rcpt).sent = JSON.parse(value) as RecipientResult; break
      case FINAL: get(rcpt).final = JSON.parse(value) as EventRecord[]; break
      case PUBLISHED: get(rcpt).published = true; break
      case ATTEMPTS: get(rcpt).attempts = Number(value); break
      case NOT_BEFORE: get(rcpt).notBefore = Number(value); break
      case PROVIDER: get(rcpt).provider = value; break
    }
  }
  return out
}

/**
 * Changes to the recipients of one message, gathered as hash fields to be written in one HSET. Each method
 * names a transition of the recipient's progress; a later call for the same field replaces the earlier one.
 */
export class DeliveryStateChanges {
  private readonly out: Record<string, string> = {}

  /** The final SMTP reply, the moment it arrives (shard thread). */
  sent (result: RecipientResult): this {
    this.out[SENT + result.rcpt] = JSON.stringify(result)
    return this
  }

  /** The recipient's final events, before they are published. */
  final (rcpt: string, events: readonly EventRecord[]): this {
    this.out[FINAL + rcpt] = JSON.stringify(events)
    return this
  }

  /** The recipient's final events are published. */
  published (rcpt: string): this {
    this.out[PUBLISHED + rcpt] = '1'
    return this
  }

  /** An attempt ended deferred: the attempts so far, and when the next one is due (epoch ms). */
  deferred (rcpt: string, attempts: number, nextAt: number): this {
    this.out[ATTEMPTS + rcpt] = String(attempts)
    return this.notBefore(rcpt, nextAt)
  }

  /** The recipient waits until `at` (epoch ms) without an attempt used up (a throttle). */
  notBefore (rcpt: string, at: number): this {
    this.out[NOT_BEFORE + rcpt] = String(at)
    return this
  }

  /** The provider an attempt found for the recipient's domain. */
  provider (rcpt: string, provider: string): this {
    this.out[PROVIDER + rcpt] = provider
    return this
  }

  get empty (): boolean {
    // eslint-disable-next-line no-unreachable-loop -- the first key answers; no array of keys is built
    for (const _field in this.out) return false
    return true
  }

  /** The fields for HSET on `deliveryStateKey(messageId)`. */
  fields (): Record<string, string> {
    return { ...this.out }
  }
}

/** Writes gathered into one transaction when the event loop turns; more than this start another. */
export const MAX_WRITE_BATCH = 256

interface PendingWrite { key: string, fields: Record<string, string> }

/**
 * The writes of delivery state changes (HSET of the fields, then the expiry renewed), each atomic as before, but
 * the writes of every message finished in one turn of the event loop go to Redis as one MULTI: one socket write
 * and one EXEC for a batch instead of four commands and a write per message. A write resolves with the error of
 * its own commands (a failed command inside MULTI fails only its call), or the batch's error, never rejects.
 */
export class DeliveryStateWriter {
  // at the end of the turn: every reply read in this turn joins the batch
  private readonly batch = new TurnBatch<PendingWrite, unknown>({
    flush: async (writes) => await this.run(writes),
    maxItems: MAX_WRITE_BATCH
  })

  constructor (private readonly redis: Redis) {}

  /** Undefined once written; else what failed. */
  async write (messageId: string, changes: DeliveryStateChanges): Promise<unknown> {
    return await this.batch.add({ key: deliveryStateKey(messageId), fields: changes.fields() })
  }

  private async run (writes: PendingWrite[]): Promise<unknown[]> {
    const tx = this.redis.multi()
    for (const w of writes) tx.hset(w.key, w.fields).expire(w.key, DELIVERY_STATE_TTL_S)
    let replies
    try {
      replies = await tx.exec()
    } catch (err) {
      return writes.map(() => err ?? new Error('delivery state write failed'))
    }
    return writes.map((_w, i) => {
      if (replies === null) return new Error('delivery state transaction discarded')
      return replies[2 * i]?.[0] ?? replies[2 * i + 1]?.[0] ?? undefined
    })
  }
}
