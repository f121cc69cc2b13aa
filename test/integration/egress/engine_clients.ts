import type { Redis } from 'ioredis'
import { newRedis, redisReady } from '../../../stores/clients/mod.ts'

/** A Redis client made as an engine shard thread makes its own (engine/actor/worker.ts), connected. */
export async function engineRedis (url: string): Promise<Redis> {
  const redis = newRedis(url, {
    connectionName: 'test-egress', enableAutoPipelining: true, maxRetriesPerRequest: 1, commandTimeout: 1000
  })
  redis.on('error', () => {})
  await redisReady(redis)
  return redis
}

/** `n` engine-like clients. */
export async function engineClients (url: string, n: number): Promise<Redis[]> {
  return await Promise.all(Array.from({ length: n }, async () => await engineRedis(url)))
}

export const sleep = async (ms: number): Promise<void> => await new Promise((resolve) => setTimeout(resolve, ms))
