/** The one event publisher (and the suppression it may add), and the recorder of opens, clicks and unsubscribes. */
export { publishEvent, suppressAddress } from './event_publish.js';
export { TrackingRecorder, TRACKING_DEDUPE_SLOT_MS, DEFAULT_TRACKING_TOKEN_TTL_MS } from './tracking_events.js';
//# sourceMappingURL=mod.js.map