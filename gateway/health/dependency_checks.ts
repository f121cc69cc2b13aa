import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import { redisHealth, type RedisHealth } from '../../stores/clients/mod.ts'

/** How long each readiness check may take before its dependency counts as `unavailable`. */
export const READINESS_CHECK_TIMEOUT_MS = 1000

export type NatsHealth = 'ok' | 'unavailable'

/** NATS answers a round trip within the timeout. */
export async function natsCheck (nc: NatsConnection, timeoutMs = READINESS_CHECK_TIMEOUT_MS): Promise<NatsHealth> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<NatsHealth>((resolve) => { timer = setTimeout(() => resolve('unavailable'), timeoutMs) })
  try {
    return await Promise.race([nc.rtt().then(() => 'ok' as const, () => 'unavailable' as const), deadline])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Redis takes a write within the timeout: `full` when it answers but refuses writes at `maxmemory` (a Redis that
 * answers PING and reads yet cannot record events, rate limits or idempotency keys is not ready).
 */
export async function redisCheck (redis: Redis, timeoutMs = READINESS_CHECK_TIMEOUT_MS): Promise<RedisHealth> {
  return await redisHealth(redis, timeoutMs)
}
