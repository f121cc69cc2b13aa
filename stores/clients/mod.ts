/** NATS and Redis clients and the helpers every process builds on them: connect, publish, batched Lua, JetStream setup. */
export { connectNats, connectRedis, newRedis, redisReady } from './connect.ts'
export { ensureJetStream, ensureStoreShare, ensureStreams, StoreReservationError } from './jetstream_ensure.ts'
export { isConsumerNotFound, isJetStreamFull, isStreamNotFound, isWrongLastSequence } from './nats_errors.ts'
export { ScriptBatch, batchedLua, MAX_SCRIPT_BATCH } from './script_batch.ts'
export { JsPublisher, PublishTimeoutError, PublishRejectedError, PayloadTooLargeError, type JsPublish } from './js_publisher.ts'
export { StreamRoomWatch, roomBelowAdmissionLimit, streamsAtAdmissionLimit } from './stream_room.ts'
export { isRedisFull, redisHealth, RedisHealthWatch, type RedisHealth } from './redis_health.ts'
export {
  assertNoEviction, redisEvictionPolicy, EvictionPolicyWatch, RedisEvictionPolicyError, REQUIRED_EVICTION_POLICY, type EvictionPolicyState
} from './redis_policy.ts'
export { releaseGhosts, releaseUnstored, type GhostTarget, type SweepIo } from './ghost_entries.ts'
export { deleteIfStored } from './delete_message.ts'
