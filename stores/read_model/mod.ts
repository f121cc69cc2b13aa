/** The Redis read model of messages and hourly stats, written by its Lua scripts and read by the API. */
export * from './message_store.ts'
