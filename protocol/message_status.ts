import type { MessageStatus } from './events.ts'

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
 * A message's status follows its recipients: `delivered` when every recipient was delivered, else the most advanced
 * status among the recipients that were not, in this order (first wins). `sending` stands for a message some of whose
 * recipients were delivered while the rest have no outcome yet.
 */
export const UNDELIVERED_STATUS_ORDER: readonly MessageStatus[] = [
  'bounced', 'complained', 'failed', 'deferred', 'sending', 'scheduled', 'queued'
]
