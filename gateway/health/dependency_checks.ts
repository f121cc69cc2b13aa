import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import { redisHealth, type RedisHealth } from '../../stores/clients/mod.ts'
import { jetStreamStoreFull } from './queue_room.ts'

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

export type QueueRoom = 'ok' | 'full' | 'unavailable'

/**
 * The streams a send writes to have room for one more message (`jetStreamStoreFull`): `full` while sends are being
 * refused with 503 `queue_full`, until delivery frees room.
 */
export async function queueCheck (nc: NatsConnection, timeoutMs = READINESS_CHECK_TIMEOUT_MS): Promise<QueueRoom> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<QueueRoom>((resolve) => { timer = setTimeout(() => resolve('unavailable'), timeoutMs) })
  try {
    const room = jetStreamStoreFull(nc).then((full) => full ? 'full' as const : 'ok' as const, () => 'unavailable' as const)
    return await Promise.race([room, deadline])
  } finally {
    clearTimeout(timer)
  }
}
