export { loadConfig, ConfigError } from './load.ts'
export {
  EnvSchema, DEFAULT_DELIVERY_RETRY_SCHEDULE, DEFAULT_DNSBL_ZONES, DEFAULT_NATS_STORE_MB, DEFAULT_WEBHOOK_RETRY_SCHEDULE,
  MAX_MESSAGE_CONTENT_RETENTION_DAYS
} from './schema.ts'
export type { Config, Role, Plan, SpfSetting } from './settings.ts'
export type { CidrRange } from './cidr.ts'
export { parseRedisUrl, describeRedisTarget, RedisUrlError, type RedisTarget, type SentinelAddress } from './redis_target.ts'
