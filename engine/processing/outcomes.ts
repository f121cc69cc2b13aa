import { type BounceCategory, type EventRecord, type QueuedMessage, bounceCategory, suppresses } from '../../protocol/mod.ts'
import type { RecipientOutcome } from '../actor/classify.ts'
import type { RecipientResult } from '../actor/task.ts'
import type { AttemptVerdict } from '../destination_backoff.ts'
import { DeliveryStateChanges } from '../delivery_state_layout.ts'
import type { EventFactory } from '../events_out.ts'
import { nextAttemptAt, spanPassed } from '../retry_schedule.ts'
import { SANDBOX_RETRY_SCHEDULE_S, type SandboxResult } from '../sandbox.ts'

/**
 * What the outcomes of one delivery mean. actor/classify.ts turns an SMTP transaction into a RecipientOutcome;
 * this module is the one place that turns those outcomes into what follows from them: the events, the delivery
 * state, the suppressions, the counts, and whether the message comes back. Pure: the shell writes and publishes.
 *
 * | outcome   | when            | events                                | delivery state       | suppresses     | counted      |
 * |-----------|-----------------|---------------------------------------|----------------------|----------------|--------------|
 * | delivered |                 | delivered (+ the sandbox's follow-up) | final                | a complaint²   | delivered    |
 * | bounced   |                 | bounced hard, with its category³      | final                | mailbox/domain¹| bounced hard |
 * | failed    |                 | failed, with its failure_category     | final                |                | failed       |
 * | deferred  | span not passed | deferred, attempt n, next_attempt_at  | attempts, not before |                | deferred     |
 * | deferred  | span passed     | bounced soft, the reply's code or 421 | final                |                | bounced soft |
 * | throttled |                 |                                       | not before           |                |              |
 * | moved     |                 |                                       |                      |                |              |
 *
 * ¹ a hard bounce of the mailbox or domain category, unless Outbox refused the destination itself (`suppress: false`).
 * ² a simulated one, and the shell applies no suppression of a test message: the sandbox simulates events, not list
 *   state. "span": the message's retry span (retry_schedule.ts).
 * ³ `operator` for an operator's bounce of waiting mail (engine/queue_holds.ts), which has no reply to read.
 */

/** A message whose shard moved is handed back for this long: its new owner takes it from JetStream meanwhile. */
export const MOVED_RETRY_MS = 5_000

export type SuppressionReason = 'hard_bounce' | 'complaint'

/** What one outcome adds to `outbox_delivery_outcomes_total`, `outbox_bounces_total` and `outbox_complaints_total`. */
export type OutcomeCount =
  | { outcome: 'delivered', complaint: boolean }
  | { outcome: 'bounced', bounce: 'hard' | 'soft', category: BounceCategory }
  | { outcome: 'failed' }
  | { outcome: 'deferred' }

export interface OutcomeEffects {
  /** The delivery state to write before anything is published. */
  changes: DeliveryStateChanges
  /** Every event to publish, in the order of the results. */
  events: EventRecord[]
  /** Recipients that got their final outcome. */
  finals: string[]
  /** Addresses for the organisation's suppression list. */
  suppress: Array<{ email: string, reason: SuppressionReason }>
  /** When each recipient that goes on waiting is due again (epoch ms). */
  waits: Map<string, number>
  counts: OutcomeCount[]
}

export interface OutcomeContext {
  events: EventFactory
  /** Attempts that ended deferred before this delivery (the delivery state's). */
  attemptsBefore: (rcpt: string) => number
  /** Sandbox follow-ups (complaint, open, click) of delivered recipients. */
  followUps: ReadonlyMap<string, SandboxResult['followUp']>
  /** The retry schedule in seconds (see `retryScheduleOf`). */
  schedule: readonly number[]
  /** From this time on a deferred recipient gives up (retry_schedule.ts `giveUpAt`). */
  giveUpAt: number
  /** The clock a throttle's wait counts from. */
  now: number
}

/** The retry schedule of a message: the sandbox's single short step for test messages, else the configured one. */
export function retryScheduleOf (msg: Pick<QueuedMessage, 'environment'>, configured: readonly number[]): readonly number[] {
  return msg.environment === 'test' ? SANDBOX_RETRY_SCHEDULE_S : configured
}

/** The code of a soft bounce: the deferral reply's own code, else 421 (no reply: the connection failed). */
export function softBounceCode (response: string): string {
  return /^[45]\d\d/.exec(response)?.[0] ?? '421'
}

export function classifyOutcomes (results: readonly RecipientResult[], ctx: OutcomeContext): OutcomeEffects {
  const out: OutcomeEffects = { changes: new DeliveryStateChanges(), events: [], finals: [], suppress: [], waits: new Map(), counts: [] }
  const { events } = ctx
  for (const { rcpt, at, outcome } of results) {
    const atMs = Date.parse(at)
    const attempt = ctx.attemptsBefore(rcpt) + 1
    let final: EventRecord[] | undefined
    switch (outcome.kind) {
      case 'delivered': {
        final = [events.make('delivered', rcpt, at, { delivered_at: at, smtp_response: outcome.response })]
        const f = ctx.followUps.get(rcpt)
        if (f !== undefined) final.push(events.make(f.type, rcpt, f.at, f.fields))
        if (f?.type === 'complained') out.suppress.push({ email: rcpt, reason: 'complaint' })
        out.counts.push({ outcome: 'delivered', complaint: f?.type === 'complained' })
        break
      }
      case 'bounced': {
        const category = outcome.operator === true ? 'operator' : bounceCategory({ code: outcome.code, text: outcome.message })
        final = [events.make('bounced', rcpt, at, {
          bounce_type: 'hard', bounce_code: outcome.code, bounce_message: outcome.message, bounce_category: category, bounced_at: at
        })]
        if (outcome.suppress !== false && suppresses(category)) out.suppress.push({ email: rcpt, reason: 'hard_bounce' })
        out.counts.push({ outcome: 'bounced', bounce: 'hard', category })
        break
      }
      case 'failed':
        final = [events.make('failed', rcpt, at, { failed_at: at, failure_category: outcome.category, reason: outcome.reason })]
        out.counts.push({ outcome: 'failed' })
        break
      case 'deferred':
        if (!spanPassed(atMs, ctx.giveUpAt)) {
          const next = nextAttemptAt(atMs, attempt, ctx.schedule)
          out.events.push(events.make('deferred', rcpt, at, {
            deferred_at: at, smtp_response: outcome.response, attempt, next_attempt_at: new Date(next).toISOString()
          }, attempt))
          out.changes.deferred(rcpt, attempt, next)
          out.waits.set(rcpt, next)
          out.counts.push({ outcome: 'deferred' })
        } else {
          const code = softBounceCode(outcome.response)
          const category = bounceCategory({ code, text: outcome.response })
          final = [events.make('bounced', rcpt, at, {
            bounce_type: 'soft', bounce_code: code, bounce_message: outcome.response, bounce_category: category, bounced_at: at
          })]
          out.counts.push({ outcome: 'bounced', bounce: 'soft', category })
        }
        break
      case 'throttled': {
        const until = ctx.now + outcome.retryAfterMs
        out.changes.notBefore(rcpt, until)
        out.waits.set(rcpt, until)
        break
      }
      case 'moved': // the state is the shard owner's to write: this process only hands the message back
        out.waits.set(rcpt, ctx.now + MOVED_RETRY_MS)
        break
    }
    if (final !== undefined) {
      out.changes.final(rcpt, final)
      out.events.push(...final)
      out.finals.push(rcpt)
    }
  }
  return out
}

/**
 * When the message comes back: undefined when every pending recipient now has its final outcome (the message is
 * done with), else the earliest time one that goes on waiting is due (this delivery's wait, else its recorded one).
 */
export function resumeAt (pending: readonly string[], effects: Pick<OutcomeEffects, 'finals' | 'waits'>,
  notBefore: (rcpt: string) => number): number | undefined {
  const done = new Set(effects.finals)
  const left = pending.filter((r) => !done.has(r))
  if (left.length === 0) return undefined
  return Math.min(...left.map((r) => effects.waits.get(r) ?? notBefore(r)))
}

/** What an attempt's outcome says about its destination: only a 4xx or a failed connection counts against it. */
export function verdictOf (o: RecipientOutcome): AttemptVerdict {
  if (o.kind === 'deferred') return 'transient'
  if (o.kind === 'delivered' || o.kind === 'bounced') return 'answered'
  return 'unknown'
}
