import { randomFillSync } from 'node:crypto'
import type { Redis } from 'ioredis'
import { webhookDeliveryLogKey, webhookReceivedKey } from '../../protocol/mod.ts'
import { TurnBatch } from '../batching/mod.ts'

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
  /** A test event (POST /v1/webhooks/{id}/test): not stored as an event, so it cannot be replayed. */
  test: boolean
  /**
   * The first REQUEST_EXCERPT_CHARS of the body that was sent, for an attempt that did not succeed and for a test
   * event; null otherwise (a successful attempt's body is its event, GET /v1/events/{id}).
   */
  request_body: string | null
  /** The first 1,024 bytes of the response body; null when no response came. */
  response_body: string | null
}

/** How much of the body sent the log keeps for an attempt that did not succeed (bounded: 1,000 entries a webhook). */
export const REQUEST_EXCERPT_CHARS = 2048

/** An entry as the API shows it: entries written before a field existed read with its empty value. */
function shown (e: Partial<DeliveryAttempt> & Omit<DeliveryAttempt, 'test' | 'request_body' | 'response_body'>): DeliveryAttempt {
  return { ...e, test: e.test ?? false, request_body: e.request_body ?? null, response_body: e.response_body ?? null }
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

/** A day's received set outlives the events of that day (kept 30 days) by one day. */
const RECEIVED_TTL_S = 31 * 24 * 3600

/** `yyyymmdd` (UTC) of a time in ms; undefined for a time that is not one. */
export function utcDay (ms: number): string | undefined {
  if (!Number.isFinite(ms)) return undefined
  return new Date(ms).toISOString().slice(0, 10).replaceAll('-', '')
}

function receivedKeyOf (webhookId: string, eventMs: number): string | undefined {
  const day = utcDay(eventMs)
  return day === undefined ? undefined : webhookReceivedKey(webhookId, day)
}

/** Attempts are written in batches, at most this long after they were made. */
const FLUSH_MS = 20

/** One attempt waiting for its batch: its log entry, and the received set it joins when it succeeded. */
interface PendingAttempt {
  webhookId: string
  json: string
  receivedKey?: string
  eventId: string
}

/**
 * The delivery log: a Redis list per webhook, newest first, capped at 1000 entries and expiring 30 days
 * after the last attempt; and, per webhook and UTC day, the set of event ids it answered with a 2xx. Ids (`whd_…`)
 * sort by time, which gives a stable cursor. Writes are batched: one pipeline (LPUSH of all new entries, LTRIM,
 * EXPIRE per webhook) every 20 ms at most.
 */
export class DeliveryLog {
  private readonly batch = new TurnBatch<PendingAttempt, void>({ after: FLUSH_MS, flush: async (items) => await this.write(items) })

  constructor (private readonly redis: Redis) {}

  /**
   * Resolves when the entry is written (with the batch it belongs to). `eventTimestamp`: the event's own
   * timestamp, for a real event (not a test event); with a successful attempt, the event is then recorded as
   * received by this webhook (see receivedKeyOf), which a recover reads.
   */
  async record (webhookId: string, entry: DeliveryAttempt, eventTimestamp?: string): Promise<void> {
    const receivedKey = entry.error === null && eventTimestamp !== undefined
      ? receivedKeyOf(webhookId, Date.parse(eventTimestamp))
      : undefined
    await this.batch.add({ webhookId, json: JSON.stringify(entry), receivedKey, eventId: entry.event_id })
  }

  /** One pipeline for the batch: each webhook's entries pushed in one LPUSH, each received set grown in one SADD. */
  private async write (items: PendingAttempt[]): Promise<void[]> {
    const entries = new Map<string, string[]>()
    const received = new Map<string, string[]>()
    for (const a of items) {
      const list = entries.get(a.webhookId)
      if (list === undefined) entries.set(a.webhookId, [a.json])
      else list.push(a.json)
      if (a.receivedKey === undefined) continue
      const ids = received.get(a.receivedKey)
      if (ids === undefined) received.set(a.receivedKey, [a.eventId])
      else ids.push(a.eventId)
    }
    const p = this.redis.pipeline()
    for (const [webhookId, list] of entries) {
      const key = webhookDeliveryLogKey(webhookId)
      p.lpush(key, ...list).ltrim(key, 0, DELIVERY_LOG_MAX - 1).expire(key, DELIVERY_LOG_TTL_S)
    }
    for (const [key, ids] of received) p.sadd(key, ...ids).expire(key, RECEIVED_TTL_S)
    const results = await p.exec()
    const failed = results?.find(([err]) => err !== null)
    // eslint-disable-next-line no-throw-literal -- rethrows the Redis client's own error
    if (failed !== undefined) throw failed[0] as Error
    return new Array<void>(items.length)
  }

  /** Writes what is gathered and waits for every batch sent so far. */
  async close (): Promise<void> {
    await this.batch.close()
  }

  /** Attempts older than `before` (a delivery id), newest first; one more than asked tells whether more exist. */
  async list (webhookId: string, limit: number, before?: string): Promise<{ data: DeliveryAttempt[], hasMore: boolean }> {
    const raw = await this.redis.lrange(webhookDeliveryLogKey(webhookId), 0, DELIVERY_LOG_MAX - 1)
    const all = raw.map((s) => shown(JSON.parse(s) as DeliveryAttempt))
    // Several processes push concurrently, so the list is only nearly ordered; the ids order it exactly.
    all.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
    const rest = before === undefined ? all : all.filter((e) => e.id < before)
    return { data: rest.slice(0, limit), hasMore: rest.length > limit }
  }

  /**
   * Of these events (id and timestamp in ms), the ones this webhook never answered with a 2xx, in the order
   * given. One SMISMEMBER per UTC day the events span.
   */
  async notReceived (webhookId: string, events: ReadonlyArray<{ id: string, ms: number }>): Promise<string[]> {
    const flags = await this.answered(events.map((e) => ({ webhookId, eventId: e.id, ms: e.ms })))
    return events.filter((_e, i) => !flags[i]).map((e) => e.id)
  }

  /**
   * Whether each webhook answered each event (id and timestamp in ms) with a 2xx, in the order given: one pipeline,
   * one SMISMEMBER per webhook and UTC day involved. An event whose time is not one reads as not answered.
   */
  async answered (items: ReadonlyArray<{ webhookId: string, eventId: string, ms: number }>): Promise<boolean[]> {
    const byKey = new Map<string, Array<{ id: string, i: number }>>()
    items.forEach((e, i) => {
      const key = receivedKeyOf(e.webhookId, e.ms)
      if (key === undefined) return
      const list = byKey.get(key)
      if (list === undefined) byKey.set(key, [{ id: e.eventId, i }])
      else list.push({ id: e.eventId, i })
    })
    const answered = new Array<boolean>(items.length).fill(false)
    const groups = [...byKey]
    if (groups.length === 0) return answered
    const p = this.redis.pipeline()
    for (const [key, list] of groups) p.smismember(key, ...list.map((e) => e.id))
    const results = (await p.exec()) ?? []
    groups.forEach(([, list], g) => {
      const [err, flags] = results[g] ?? [new Error('no reply'), null]
      if (err !== null) throw err
      list.forEach((e, j) => { if ((flags as number[])[j] === 1) answered[e.i] = true })
    })
    return answered
  }

  /**
   * Deletes the attempts to deliver these events from the webhooks' logs and received sets, for an erase (an entry names
   * only the event, but the event is about the erased address). Resolves with how many log entries were deleted.
   */
  async eraseEvents (webhookIds: readonly string[], events: ReadonlyArray<{ id: string, ms: number }>): Promise<number> {
    if (events.length === 0) return 0
    const ids = new Set(events.map((e) => e.id))
    let erased = 0
    for (const webhookId of webhookIds) {
      const key = webhookDeliveryLogKey(webhookId)
      const raw = await this.redis.lrange(key, 0, -1)
      const gone = raw.filter((s) => ids.has((JSON.parse(s) as DeliveryAttempt).event_id))
      // LREM by value: entries pushed meanwhile are left in place
      for (const s of new Set(gone)) erased += await this.redis.lrem(key, 0, s)
      const p = this.redis.pipeline()
      for (const e of events) {
        const received = receivedKeyOf(webhookId, e.ms)
        if (received !== undefined) p.srem(received, e.id)
      }
      await p.exec()
    }
    return erased
  }

  async clear (webhookId: string): Promise<void> {
    await this.redis.del(webhookDeliveryLogKey(webhookId))
  }
}
