export { loadConfig, ConfigError } from './load.ts'
export { EnvSchema, DEFAULT_DELIVERY_RETRY_SCHEDULE, DEFAULT_WEBHOOK_RETRY_SCHEDULE } from './schema.ts'
export type { Config, Role, Plan } from './schema.ts'
export type { CidrRange } from './cidr.ts'
