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
