/**
 * The Redis read model of messages and hourly stats, written by its Lua scripts and read by the API; the projector
 * applies OB_EVENTS to it (run by engine processes).
 */
export * from './message_store.js';
export { startProjector, PROJECTOR_RETRY_FIRST_MS, PROJECTOR_RETRY_MAX_MS } from './projector.js';
//# sourceMappingURL=mod.js.map