/** NATS and Redis clients and the helpers every process builds on them: connect, publish, batched Lua, JetStream setup. */
export { connectNats, connectRedis, newRedis, redisReady } from './connect.js';
export { ensureJetStream, ensureStoreShare, ensureStreams, StoreReservationError } from './jetstream_ensure.js';
export { isConsumerNotFound, isJetStreamFull, isStreamNotFound, isWrongLastSequence } from './nats_errors.js';
export { ScriptBatch, batchedLua, MAX_SCRIPT_BATCH } from './script_batch.js';
export { JsPublisher, PublishTimeoutError, PublishRejectedError, PayloadTooLargeError } from './js_publisher.js';
export { StreamRoomWatch, roomBelowAdmissionLimit, streamsAtAdmissionLimit } from './stream_room.js';
export { isRedisFull, redisHealth, RedisHealthWatch } from './redis_health.js';
export { assertNoEviction, redisEvictionPolicy, EvictionPolicyWatch, RedisEvictionPolicyError, REQUIRED_EVICTION_POLICY } from './redis_policy.js';
//# sourceMappingURL=mod.js.map