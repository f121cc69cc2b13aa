import type { Redis } from 'ioredis'
import { webhookDeliveryLogKey } from './subjects.ts'

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

/**
 * The delivery log: a Redis list per webhook, newest first, capped at 1000 entries and expiring 30 days
 * after the last attempt. Ids (`whd_…`) sort by time, which gives a stable cursor.
 */
export class DeliveryLog {
  constructor (private readonly redis: Redis) {}

  async record (webhookId: string, entry: DeliveryAttempt): Promise<void> {
    const key = webhookDeliveryLogKey(webhookId)
    await this.redis.multi().lpush(key, JSON.stringify(entry)).ltrim(key, 0, DELIVERY_LOG_MAX - 1).expire(key, DELIVERY_LOG_TTL_S).exec()
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
