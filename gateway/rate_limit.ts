import type { Redis } from 'ioredis'
import { ApiError, STORE_FULL_RETRY_AFTER_S } from '../protocol/mod.ts'
import { ScriptBatch, isRedisFull } from '../stores/clients/mod.ts'
import { LocalBuckets } from './local_buckets.ts'
import { GCRA_LUA } from './gcra.lua.ts'
import { GCRA_FINISH_LUA } from './gcra_finish.lua.ts'

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
 * What a request does when Redis is full (refuses the limiter's write with OOM): `local` is decided by this
 * process's own bucket of the same limit (fail open to a per-process limit: requests that need no Redis write go
 * on); `refuse` answers 503 `store_full` (fail closed: the request would change data the store cannot record).
 */
export type WhenStoreFull = 'local' | 'refuse'

/**
 * Per-key GCRA limits kept in Redis. Every decision of one event-loop turn goes to Redis as one EVALSHA
 * (ScriptBatch), run in arrival order, so concurrent requests on one key are decided exactly as if one by one.
 */
export class RateLimiter {
  private readonly gcra: ScriptBatch<[number, number, number, number]>
  private readonly local = new LocalBuckets()

  /** `onLocal`: called for each decision made by a local bucket because Redis was full. */
  constructor (redis: Redis, private readonly onLocal: () => void = () => {}) {
    this.gcra = new ScriptBatch(redis, 'ob_gcra_batch', GCRA_LUA, { finish: GCRA_FINISH_LUA })
  }

  /**
   * `perMinute` requests a minute with a burst of `burst`. Redis not answering becomes 503 `service_unavailable`
   * within the command timeout; Redis full is handled as `whenFull` says.
   */
  async take (key: string, perMinute: number, burst = perMinute, whenFull: WhenStoreFull = 'local'): Promise<RateDecision> {
    let r: [number, number, number, number]
    try {
      r = await this.gcra.call([key], [Math.round(60_000_000 / perMinute), burst, 1])
    } catch (err) {
      if (!isRedisFull(err)) {
        throw new ApiError('service_unavailable', 'The rate limiter is unavailable; retry shortly.', { cause: err, retryAfter: 1 })
      }
      if (whenFull === 'refuse') {
        throw new ApiError('store_full', 'The data store is full: requests that change data are refused until it has room; retry later.', {
          cause: err, retryAfter: STORE_FULL_RETRY_AFTER_S
        })
      }
      this.onLocal()
      return this.local.take(key, perMinute, burst, Date.now())
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
