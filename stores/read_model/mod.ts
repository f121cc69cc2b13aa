/**
 * The Redis read model of messages and hourly stats, written by its Lua scripts and read by the API; the projector
 * applies OB_EVENTS to it (run by engine processes).
 */
export * from './message_store.ts'
export { messagesToAddress, messagesInDelivery, eraseFromReadModel, type EventToErase, type ReadModelErased } from './erase.ts'
export { startProjector, PROJECTOR_RETRY_FIRST_MS, PROJECTOR_RETRY_MAX_MS, type Projector } from './projector.ts'
export { hourBucket } from './message_store_keys.ts'
