import { statusAfter, type EventType, type MessageStatus } from './events.ts'

/**
 * Status precedence: an event moves a message to its status only when that status ranks higher than the
 * current one, so events arriving late or out of order (a `deferred` after `delivered`) never move a
 * message backwards, and applying the same events in any order ends in the same status.
 * Equal ranks keep the first status (a message is either `bounced` or `failed`, whichever came first).
 */
export const STATUS_RANK: Readonly<Record<MessageStatus, number>> = {
  queued: 0,
  scheduled: 0,
  sending: 1,
  deferred: 2,
  delivered: 3,
  bounced: 4,
  failed: 4,
  complained: 5,
  // set only by a cancel, never by an event: no event comes for a message that is never sent
  canceled: 6
}

/**
 * A recipient's own status: no outcome yet (`queued`, or `scheduled` while the message is), an outcome of its events,
 * or `suppressed`: skipped at the send because the address is on the suppression list, never attempted.
 */
export const RECIPIENT_STATUSES = [
  'queued', 'scheduled', 'deferred', 'delivered', 'bounced', 'failed', 'complained', 'suppressed'
] as const
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number]

/** Recipient outcomes that end its delivery, in the order the message's status takes them (first wins). */
export const FINAL_STATUS_ORDER = ['bounced', 'complained', 'failed', 'delivered'] as const

/** The recipient statuses counted per message (the read model's `c:<status>` fields). */
export const COUNTED_RECIPIENT_STATUSES = ['deferred', ...FINAL_STATUS_ORDER, 'suppressed'] as const
export type CountedRecipientStatus = (typeof COUNTED_RECIPIENT_STATUSES)[number]

/** How many recipients a message has, and how many are in each counted status (the others have no outcome yet). */
export interface RecipientCounts {
  recipients: number
  counts: Readonly<Partial<Record<CountedRecipientStatus, number>>>
  /** The message's status before any outcome: `queued`, or `scheduled` while it waits for its time. */
  base: 'queued' | 'scheduled'
}

/**
 * The one rule for a message's status, from its recipients (stores/read_model/recipient_status.ts runs the same rule
 * in Redis, and a test runs both over the same table):
 * 1. a recipient `deferred` (waiting for a retry): `deferred`;
 * 2. else some recipients with no outcome yet: `sending` when another one has an outcome (suppressed ones aside),
 *    else the base status (`queued` or `scheduled`);
 * 3. else (every recipient has an outcome) the first of `bounced`, `complained`, `failed`, `delivered` that a recipient
 *    has. Suppressed recipients never set the status.
 * Undefined when the recipients are not known (the message is not recorded yet).
 */
export function messageStatusOf (r: RecipientCounts): MessageStatus | undefined {
  if (r.recipients <= 0) return undefined
  const n = (s: CountedRecipientStatus): number => r.counts[s] ?? 0
  if (n('deferred') > 0) return 'deferred'
  const finals = FINAL_STATUS_ORDER.reduce((sum, s) => sum + n(s), 0)
  if (finals + n('suppressed') < r.recipients) return finals > 0 ? 'sending' : r.base
  return FINAL_STATUS_ORDER.find((s) => n(s) > 0) ?? r.base
}

/** Recipients delivered: those `complained` were delivered first (a complaint is about a message received). */
export function deliveredCount (counts: Readonly<Partial<Record<CountedRecipientStatus, number>>>): number {
  return (counts.delivered ?? 0) + (counts.complained ?? 0)
}

/**
 * The status an event gives the recipient it names (by precedence, as for the message): its own status, and for an
 * `opened` or `clicked` the recipient `delivered`, since it read the message (an open can reach the read model
 * before its `delivered`, or without one where the delivery event was lost). Undefined: the event leaves it as it is.
 */
export function recipientStatusAfter (type: EventType): MessageStatus | undefined {
  return statusAfter(type) ?? (type === 'opened' || type === 'clicked' ? 'delivered' : undefined)
}
