import { randomFillSync } from 'node:crypto'
import type { Redis } from 'ioredis'
import { webhookDeliveryLogKey } from '../../protocol/mod.ts'

/** The most recent attempts kept per webhook, and for how long after the last one. */
export const DELIVERY_LOG_MAX = 1000
export const DELIVERY_LOG_TTL_S = 30 * 24 * 3600 // 30 days

/** One delivery attempt as GET /v1/webhooks/{id}/deliveries shows it. */
export interface DeliveryAttempt {
  id: string
  event_id: string
  event_type: string
  attempt: number
  /** null when no HTTP response was received (timeout, refused connection, SSRF guard). */
  status_code: number | null
  duration_ms: number
  /** null on success; else a short code such as http_500, timeout, ssrf_blocked. */
  error: string | null
  at: string
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'
const pool = Buffer.alloc(4096)
let poolAt = pool.length
/** Every two-character string of the alphabet, indexed by two 5-bit values. */
const PAIRS = Array.from({ length: 1024 }, (_v, i) => CROCKFORD[i >> 5]! + CROCKFORD[i & 31]!)
let prefix = ''
let prefixAt = -1

/**
 * `whd_` ids in the format of `newId` (10 characters of time, 16 random), drawing the random part from a
 * pooled buffer: one `randomFillSync` per 256 ids instead of one per attempt.
 */
export function deliveryId (now = Date.now()): string {
  if (poolAt + 16 > pool.length) { randomFillSync(pool); poolAt = 0 }
  // Attempts finish several per millisecond: the time part is made once per millisecond.
  if (now !== prefixAt) {
    let time = ''
    let t = now
    for (let i = 0; i < 10; i++) { time = CROCKFORD[t % 32] + time; t = Math.floor(t / 32) }
    prefix = `whd_${time}`
    prefixAt = now
  }
  let rand = ''
  for (let i = 0; i < 16; i += 2) rand += PAIRS[((pool[poolAt++]! & 31) << 5) | (pool[poolAt++]! & 31)]
  return prefix + rand
}

/** Attempts are written in batches, at most this long after they were made. */
const FLUSH_MS = 20

/**
 * The delivery log: a Redis list per webhook, newest first, capped at 1000 entries and expiring 30 days
 * after the last attempt. Ids (`whd_…`) sort by time, which gives a stable cursor. Writes are batched: one
 * pipeline (LPUSH of all new entries, LTRIM, EXPIRE per webhook) every 20 ms at most.
 */
export class DeliveryLog {
  private pending = new Map<string, string[]>()
  private flushing?: Promise<void>

  constructor (private readonly redis: Redis) {}

  /** Resolves when the entry is written (with the batch it belongs to). */
  record (webhookId: string, entry: DeliveryAttempt): Promise<void> {
    const list = this.pending.get(webhookId)
    if (list === undefined) this.pending.set(webhookId, [JSON.stringify(entry)])
    else list.push(JSON.stringify(entry))
    // Every entry of a batch shares its write (no promise of its own per attempt).
    this.flushing ??= new Promise<void>((resolve) => setTimeout(resolve, FLUSH_MS)).then(async () => await this.flush())
    return this.flushing
  }

  private async flush (): Promise<void> {
    const batch = this.pending
    this.pending = new Map()
    this.flushing = undefined
    const p = this.redis.pipeline()
    for (const [webhookId, entries] of batch) {
      const key = webhookDeliveryLogKey(webhookId)
      p.lpush(key, ...entries).ltrim(key, 0, DELIVERY_LOG_MAX - 1).expire(key, DELIVERY_LOG_TTL_S)
    }
    const results = await p.exec()
    const failed = results?.find(([err]) => err !== null)
    // eslint-disable-next-line no-throw-literal -- rethrows the Redis client's own error
    if (failed !== undefined) throw failed[0] as Error
  }

  /** Attempts older than `before` (a delivery id), newest first; one more than asked tells whether more exist. */
  async list (webhookId: string, limit: number, before?: string): Promise<{ data: DeliveryAttempt[], hasMore: boolean }> {
    const raw = await this.redis.lrange(webhookDeliveryLogKey(webhookId), 0, DELIVERY_LOG_MAX - 1)
    const all = raw.map((s) => JSON.parse(s) as DeliveryAttempt)
    // Several processes push concurrently, so the list is only nearly ordered; the ids order it exactly.
    all.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    const rest = before === undefined ? all : all.filter((e) => e.id < before)
    return { data: rest.slice(0, limit), hasMore: rest.length > limit }
  }

  async clear (webhookId: string): Promise<void> {
    await this.redis.del(webhookDeliveryLogKey(webhookId))
  }
}
