/**
 * Waiting mail as operators steer it: the index of mail the engine handed back for a later attempt (by recipient
 * domain, provider and organisation) and the wake-up of waiting messages for an operator's retry or bounce. The holds
 * and orders themselves are control-plane records (stores/control_plane/queue_holds.ts).
 */
export {
  QueueIndex, QUEUE_INDEX_TTL_MS, type QueueIndexEntry, type QueueSummary, type WaitingMessage, type WaitingRecipient
} from './queue_index.ts'
export { wakeWaiting, MAX_WAKE, WAKE_MARGIN_MS, type WakeResult } from './wake.ts'
