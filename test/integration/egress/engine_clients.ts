import type { Redis } from 'ioredis'
import { newRedis, redisReady } from '../../../stores/clients/mod.ts'
import type { OwnRedis } from '../../helpers/own_redis.ts'
import { eventually } from '../../helpers/waiting.ts'

/** A Redis client made as an engine shard thread makes its own (engine/actor/worker.ts), connected. */
export async function engineRedis (url: string): Promise<Redis> {
  const redis = newRedis(url, {
    connectionName: 'test-egress', enableAutoPipelining: true, maxRetriesPerRequest: 1, commandTimeout: 1000
  })
  redis.on('error', () => {})
  await redisReady(redis)
  return redis
}

/** `n` engine-like clients of the test file's own Redis (waits for useOwnRedis's hook to have started it). */
export async function engineClients (own: OwnRedis, n: number): Promise<Redis[]> {
  await eventually(() => own.server?.url, 'the test Redis to start')
  return await Promise.all(Array.from({ length: n }, async () => await engineRedis(own.server.url)))
}

export const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))
