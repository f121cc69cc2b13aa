export { loadConfig, ConfigError } from './load.js';
export { EnvSchema, DEFAULT_DELIVERY_RETRY_SCHEDULE, DEFAULT_NATS_STORE_MB, DEFAULT_WEBHOOK_RETRY_SCHEDULE, MAX_MESSAGE_CONTENT_RETENTION_DAYS } from './schema.js';
export { parseRedisUrl, describeRedisTarget, RedisUrlError } from './redis_target.js';
//# sourceMappingURL=mod.js.map