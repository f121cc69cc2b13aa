import { readFileSync } from 'node:fs'
import type { Redis } from 'ioredis'
import { ApiError } from '../engine/protocol/mod.ts'

const GCRA_LUA = readFileSync(new URL('../../gateway/gcra.lua', import.meta.url), 'utf8')

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until one more request is allowed (≥ 1 when refused). */
  retryAfterS: number
  /** Seconds until the bucket is full again. */
  resetS: number
}

type GcraRedis = Redis & { ob_gcra: (key: string, intervalUs: number, burst: number, cost: number) => Promise<[number, number, number, number]> }

/**
 * Per-key GCRA limits kept in Redis. The script is registered with `defineCommand`, so ioredis sends
 * EVALSHA and loads the script only when Redis does not know it yet.
 */
export class RateLimiter {
  private readonly redis: GcraRedis

  constructor (redis: Redis) {
    if (typeof (redis as unknown as Partial<GcraRedis>).ob_gcra !== 'function') redis.defineCommand('ob_gcra', { numberOfKeys: 1, lua: GCRA_LUA })
    this.redis = redis as unknown as GcraRedis
  }

  /** `perMinute` requests a minute with a burst of `burst`; Redis failures become 503 within the command timeout. */
  async take (key: string, perMinute: number, burst = perMinute): Promise<RateDecision> {
    let r: [number, number, number, number]
    try {
      r = await this.redis.ob_gcra(key, Math.round(60_000_000 / perMinute), burst, 1)
    } catch (err) {
      throw new ApiError('service_unavailable', 'The rate limiter is unavailable; retry shortly.', { cause: err, retryAfter: 1 })
    }
    return {
      allowed: r[0] === 1,
      limit: perMinute,
      remaining: r[1],
      retryAfterS: r[0] === 1 ? 0 : Math.max(1, Math.ceil(r[2] / 1000)),
      resetS: Math.ceil(r[3] / 1000)
    }
  }
}
