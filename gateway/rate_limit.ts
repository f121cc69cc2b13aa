import { readFileSync } from 'node:fs'
import type { Redis } from 'ioredis'
import { ApiError } from '../protocol/mod.ts'
import { ScriptBatch } from '../stores/clients/mod.ts'

const GCRA_LUA = readFileSync(new URL('../../gateway/gcra.lua', import.meta.url), 'utf8')
const GCRA_FINISH_LUA = readFileSync(new URL('../../gateway/gcra_finish.lua', import.meta.url), 'utf8')

export interface RateDecision {
  allowed: boolean
  limit: number
  remaining: number
  /** Seconds until one more request is allowed (≥ 1 when refused). */
  retryAfterS: number
  /** Seconds until the bucket is full again. */
  resetS: number
}

/**
 * Per-key GCRA limits kept in Redis. Every decision of one event-loop turn goes to Redis as one EVALSHA
 * (ScriptBatch), run in arrival order, so concurrent requests on one key are decided exactly as if one by one.
 */
export class RateLimiter {
  private readonly gcra: ScriptBatch<[number, number, number, number]>

  constructor (redis: Redis) {
    this.gcra = new ScriptBatch(redis, 'ob_gcra_batch', GCRA_LUA, { finish: GCRA_FINISH_LUA })
  }

  /** `perMinute` requests a minute with a burst of `burst`; Redis failures become 503 within the command timeout. */
  async take (key: string, perMinute: number, burst = perMinute): Promise<RateDecision> {
    let r: [number, number, number, number]
    try {
      r = await this.gcra.call([key], [Math.round(60_000_000 / perMinute), burst, 1])
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
