import {
  addressDomain, bareAddress, type DomainRecord, type EventRecord, type FailureCategory, type QueuedMessage
} from '../../protocol/mod.ts'
import type { TakeVerdict } from '../../stores/schedule/mod.ts'
import type { RecipientResult } from '../actor/task.ts'
import type { Admission } from '../destination_backoff.ts'
import { freshRecipientState, type RecipientState } from '../delivery_state_layout.ts'
import { DUE_EARLY_MS } from '../retry_schedule.ts'
import { nak, type Fate } from './fate.ts'

/**
 * What one delivery of a queued message does, decided from what is known before anything is sent: the schedule
 * state's verdict, the recipients' recorded delivery state, the sending domain, the destinations' backoff. Pure:
 * the shell (process_message.ts) reads what these functions need and carries out what they decide.
 */

/** Why a message that is never sent ends `failed`: the event's `failure_category` and `reason`. */
export interface Failure { category: FailureCategory, reason: string }

/** Every distinct bare address the message goes to (To, Cc and Bcc), in that order. */
export function recipientsOf (msg: Pick<QueuedMessage, 'to' | 'cc' | 'bcc'>): string[] {
  return [...new Set([...msg.to, ...msg.cc, ...msg.bcc].map(bareAddress))]
}

/**
 * Where a scheduled message stands: go on (due since `dueAt`, from which its retry span counts), or a fate without
 * sending. `waiting`: not due yet. `canceled`: a cancel won; the shell marks it canceled in the read model.
 */
export type ScheduleStep = { go: true, dueAt?: number } | { go: false, fate: Fate, waiting?: true, canceled?: true }

/** What the schedule state's verdict (its atomic take of a scheduled message) means for this copy. */
export function scheduleStepOf (verdict: TakeVerdict, now: number): ScheduleStep {
  switch (verdict.kind) {
    case 'taken': return { go: true, dueAt: verdict.dueAt }
    // another copy (published by a reschedule to an earlier time) carries the message on
    case 'duplicate': return { go: false, fate: { kind: 'drop' } }
    case 'wait': return { go: false, fate: nak(verdict.at - now), waiting: true }
    case 'canceled': return { go: false, fate: { kind: 'ack' }, canceled: true }
  }
}

/** What this delivery does with one recipient, from what its delivery state recorded. */
export type RecipientAction =
  /** Final events recorded and published by an earlier delivery: nothing left to do. */
  | { kind: 'done' }
  /** Final events recorded by an earlier delivery that crashed before publishing them: publish them again. */
  | { kind: 'republish', events: EventRecord[] }
  /** A final reply a crashed run received but did not turn into events: record it, never send again. */
  | { kind: 'recover', result: RecipientResult }
  /** Due now (within DUE_EARLY_MS): attempt it. */
  | { kind: 'attempt' }
  /** Its next attempt (retry schedule or throttle) comes later. */
  | { kind: 'wait', until: number }

export function recipientAction (state: RecipientState, now: number): RecipientAction {
  if (state.final !== undefined) return state.published ? { kind: 'done' } : { kind: 'republish', events: state.final }
  if (state.sent !== undefined) return { kind: 'recover', result: state.sent }
  return state.notBefore <= now + DUE_EARLY_MS ? { kind: 'attempt' } : { kind: 'wait', until: state.notBefore }
}

/** The recipients' actions, grouped as the delivery uses them; every list keeps the message's recipient order. */
export interface RecipientPlan {
  /** Recipients whose recorded final events are published again before anything else. */
  republish: string[]
  /** Every recipient without a final outcome: the message is done with once none is left. */
  pending: string[]
  /** Recorded replies to turn into events. */
  recovered: RecipientResult[]
  /** Pending recipients without a recorded reply: the ones this delivery may attempt, or fail. */
  unanswered: string[]
  /** Unanswered recipients whose time has come. */
  due: string[]
  /** The recorded state of a recipient (a fresh one when nothing was recorded). */
  state: (rcpt: string) => RecipientState
}

export function planRecipients (recipients: readonly string[], states: ReadonlyMap<string, RecipientState>, now: number): RecipientPlan {
  const plan: RecipientPlan = {
    republish: [],
    pending: [],
    recovered: [],
    unanswered: [],
    due: [],
    state: (rcpt) => states.get(rcpt) ?? freshRecipientState()
  }
  for (const rcpt of recipients) {
    const action = recipientAction(plan.state(rcpt), now)
    if (action.kind === 'republish') plan.republish.push(rcpt)
    if (action.kind === 'done' || action.kind === 'republish') continue
    plan.pending.push(rcpt)
    if (action.kind === 'recover') plan.recovered.push(action.result)
    else plan.unanswered.push(rcpt)
    if (action.kind === 'attempt') plan.due.push(rcpt)
  }
  return plan
}

/**
 * The message as a whole: `done` once every recipient has its final outcome; `wait` until the earliest next
 * attempt when nobody is due and no recorded reply waits for its events; else `work`.
 */
export type MessageStep = { kind: 'done' } | { kind: 'wait', until: number } | { kind: 'work' }

export function messageStep (plan: RecipientPlan): MessageStep {
  if (plan.pending.length === 0) return { kind: 'done' }
  if (plan.due.length === 0 && plan.recovered.length === 0) {
    return { kind: 'wait', until: Math.min(...plan.pending.map((r) => plan.state(r).notBefore)) }
  }
  return { kind: 'work' }
}

/**
 * How the due recipients are attempted. `fail`: the sending domain was removed, so every unanswered recipient
 * (due or not: no later turn can send it) fails. `none`: only recorded replies to turn into events. `sandbox`: a
 * test message, simulated (sandbox.ts). `smtp`: sent by the shard's thread, signed for `domain`.
 */
export type AttemptRoute =
  | { kind: 'fail', failure: Failure }
  | { kind: 'none' }
  | { kind: 'sandbox' }
  | { kind: 'smtp', domain: DomainRecord }

export function attemptRoute (msg: Pick<QueuedMessage, 'domain_id' | 'environment'>, domain: DomainRecord | undefined,
  plan: RecipientPlan): AttemptRoute {
  if (domain === undefined) {
    return { kind: 'fail', failure: { category: 'domain_removed', reason: `the sending domain ${msg.domain_id} no longer exists` } }
  }
  if (plan.due.length === 0) return { kind: 'none' }
  return msg.environment === 'test' ? { kind: 'sandbox' } : { kind: 'smtp', domain }
}

/** `failed` results for recipients that can never be sent. */
export function failedResults (recipients: readonly string[], failure: Failure, at: string): RecipientResult[] {
  return recipients.map((rcpt) => ({ rcpt, at, outcome: { kind: 'failed', category: failure.category, reason: failure.reason } }))
}

/**
 * The results of a message that can never be sent (its stored content is gone or does not match): a recorded
 * reply stands, every other pending recipient fails.
 */
export function unsendableResults (plan: RecipientPlan, failure: Failure, at: string): RecipientResult[] {
  return plan.pending.map((rcpt) => plan.state(rcpt).sent ?? failedResults([rcpt], failure, at)[0]!)
}

/**
 * The result of a due recipient its destination's backoff did not admit (destination_backoff.ts). It waits like a
 * throttled one (no event, no attempt used up) while its destination is busy or suspended, since no answer can
 * change before then; once the message's span has passed (`overdue`), a suspended destination's last 4xx defers
 * it, which gives up.
 */
export function unadmittedResult (rcpt: string, admission: Exclude<Admission, { kind: 'attempt' }>, overdue: boolean,
  at: string): RecipientResult {
  if (admission.kind === 'busy') return { rcpt, at, outcome: { kind: 'throttled', retryAfterMs: admission.retryAfterMs } }
  if (overdue) {
    const response = `${admission.lastResponse} (not attempted: ${addressDomain(rcpt)} answered only 4xx lately)`
    return { rcpt, at, outcome: { kind: 'deferred', response } }
  }
  return { rcpt, at, outcome: { kind: 'throttled', retryAfterMs: Math.max(0, admission.probeAt - Date.parse(at)) } }
}
