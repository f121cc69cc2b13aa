import type { Redis } from 'ioredis'
import { REDIS_KEYS, isStoreFull } from '../../protocol/mod.ts'

/**
 * What Redis can do for us now: `ok`, `full` (it answers, but refuses writes with OOM: it reached `maxmemory`
 * under `noeviction`, so reads still work) or `unavailable` (it does not answer in time, or answers an error).
 */
export type RedisHealth = 'ok' | 'full' | 'unavailable'

/** How long the probe key lives; any later probe overwrites it. */
const PROBE_TTL_MS = 10_000

/** Whether `err` is Redis refusing a write because it is at `maxmemory` (error reply code `OOM`). */
export const isRedisFull = isStoreFull

/**
 * Probes Redis with a small write: answering PING is not enough, since a Redis at `maxmemory` answers PING and
 * reads while refusing every write. Resolves within `timeoutMs`, never rejects.
 */
export async function redisHealth (redis: Redis, timeoutMs: number): Promise<RedisHealth> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<RedisHealth>((resolve) => { timer = setTimeout(() => resolve('unavailable'), timeoutMs) })
  const probe = redis.set(REDIS_KEYS.healthProbe, Date.now(), 'PX', PROBE_TTL_MS).then(
    () => 'ok' as const,
    (err: unknown) => isRedisFull(err) ? 'full' as const : 'unavailable' as const
  )
  try {
    return await Promise.race([probe, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * The last known Redis health, probed every `everyMs` in the background, for paths that must not add a round
 * trip per message (inbound SMTP). `noteFailure` lets a caller that met OOM say so at once.
 */
export class RedisHealthWatch {
  private current: RedisHealth = 'ok'
  private timer: NodeJS.Timeout | undefined
  private probing = false

  constructor (private readonly redis: Redis, private readonly everyMs = 1000) {}

  get health (): RedisHealth {
    return this.current
  }

  start (): this {
    this.timer = setInterval(() => { void this.probe() }, this.everyMs)
    this.timer.unref()
    return this
  }

  stop (): void {
    clearInterval(this.timer)
  }

  /** A write that failed with OOM: full until the next probe says otherwise. */
  noteFailure (err: unknown): void {
    if (isRedisFull(err)) this.current = 'full'
  }

  private async probe (): Promise<void> {
    if (this.probing) return
    this.probing = true
    try {
      this.current = await redisHealth(this.redis, this.everyMs)
    } finally {
      this.probing = false
    }
  }
}
