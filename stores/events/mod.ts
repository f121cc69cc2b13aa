/** The one event publisher (and the suppression it may add), and the recorder of opens, clicks and unsubscribes. */
export { publishEvent, suppressAddress } from './event_publish.ts'
export { TrackingRecorder, TRACKING_DEDUPE_SLOT_MS, DEFAULT_TRACKING_TOKEN_TTL_MS, type TrackingRequest } from './tracking_events.ts'
export { eraseStoredEvents, type ErasedEvent } from './event_erase.ts'
