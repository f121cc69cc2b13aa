import { before, after } from 'node:test'
import type { Redis } from 'ioredis'
import { ServerProcess } from './servers.ts'
import { connectRedis, redisReady } from '../../stores/clients/mod.ts'

/** A redis-server of the test file's own and a client connected to it, started before and stopped after its tests. */
export interface OwnRedis { server: ServerProcess, redis: Redis }

export function useOwnRedis (): OwnRedis {
  const own = {} as OwnRedis
  before(async () => {
    own.server = await ServerProcess.redis()
    own.redis = connectRedis(own.server.url, 'test')
    await redisReady(own.redis)
  })
  after(async () => {
    own.redis.disconnect()
    await own.server.dispose()
  })
  return own
}
