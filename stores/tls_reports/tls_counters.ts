import type { Redis } from 'ioredis'

/**
 * The TLS-RPT counters (RFC 8460) in Redis, named in this file only. Per UTC day and policy domain:
 *   ob:tlsrpt:{<day>}:domains        SET of the policy domains that have counters that day
 *   ob:tlsrpt:{<day>}:d:<domain>     HASH policy → JSON {type, strings, mx}; ok → successful sessions;
 *                                    f:<JSON failure detail> → failed sessions with that detail
 *   ob:tlsrpt:{<day>}:sent           SET of the domains whose report for the day was sent
 *   ob:tlsrpt:lock                   the report sender's lock: holder id, expiring (one sender per cluster)
 * Every day key expires KEEP_S after its last write. Engines' threads add to the counters in batches
 * (TlsCounterBatch): one pipeline every FLUSH_MS at most, never a round trip per message.
 */
export const KEEP_S = 8 * 86_400 // a day's counters outlive the day by a week: a report late by days can still be sent
export const FLUSH_MS = 1000
/** Distinct failure details kept per domain and day; past it they are counted under one `validation-failure`. */
export const MAX_DETAILS = 100
export const LOCK_KEY = 'ob:tlsrpt:lock'
const UNLOCK = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
// the holder's lock, or one that ran out and nobody took since, is the holder's for ARGV[2] ms from now
const RENEW = "local h = redis.call('GET', KEYS[1]) " +
  "if h == ARGV[1] or not h then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1 end return 0"

export interface TlsPolicyRef { type: 'sts', strings: string[], mx: string[] }

/** One failure detail (RFC 8460 §4.4's fields, as its JSON names them). */
export interface TlsFailureDetail {
  'result-type': string
  'sending-mta-ip'?: string
  'receiving-mx-hostname'?: string
  'receiving-ip'?: string
  'failure-reason-code'?: string
}

export interface TlsDayCounts {
  policy: TlsPolicyRef
  ok: number
  failures: Array<{ detail: TlsFailureDetail, count: number }>
}

/** `YYYY-MM-DD` of a time, in UTC. */
export function utcDay (ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

const dayKey = (day: string, rest: string): string => `ob:tlsrpt:{${day}}:${rest}`

function failureField (detail: TlsFailureDetail): string {
  // fixed field order, so one detail is one field whoever counts it
  const { 'result-type': t, 'sending-mta-ip': s, 'receiving-mx-hostname': h, 'receiving-ip': r, 'failure-reason-code': a } = detail
  return 'f:' + JSON.stringify({
    'result-type': t, ...(s !== undefined ? { 'sending-mta-ip': s } : {}), ...(h !== undefined ? { 'receiving-mx-hostname': h } : {}),
    ...(r !== undefined ? { 'receiving-ip': r } : {}), ...(a !== undefined ? { 'failure-reason-code': a } : {})
  })
}

/** Counts noted in memory, flushed to Redis in one pipeline at most every FLUSH_MS. */
export class TlsCounterBatch {
  private pending = new Map<string, { day: string, domain: string, policy: TlsPolicyRef, fields: Map<string, number> }>()
  private timer?: NodeJS.Timeout | undefined

  constructor (private readonly redis: Redis, private readonly now: () => number = Date.now) {}

  /** One TLS session with a domain that has a policy: `ok`, or failed with `detail`. */
  note (domain: string, policy: TlsPolicyRef, failure?: TlsFailureDetail): void {
    const day = utcDay(this.now())
    const key = `${day}|${domain}`
    let entry = this.pending.get(key)
    if (entry === undefined) this.pending.set(key, entry = { day, domain, policy, fields: new Map() })
    entry.policy = policy
    const field = failure === undefined ? 'ok' : failureField(failure)
    entry.fields.set(field, (entry.fields.get(field) ?? 0) + 1)
    this.timer ??= setTimeout(() => { void this.flush() }, FLUSH_MS).unref()
  }

  /** Writes what was noted; a failed write is dropped (a report is a sample, not a ledger). */
  async flush (): Promise<void> {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.pending.size === 0) return
    const batch = this.pending
    this.pending = new Map()
    const p = this.redis.pipeline()
    for (const { day, domain, policy, fields } of batch.values()) {
      const key = dayKey(day, `d:${domain}`)
      p.sadd(dayKey(day, 'domains'), domain).expire(dayKey(day, 'domains'), KEEP_S)
      p.hset(key, 'policy', JSON.stringify(policy))
      for (const [field, n] of fields) p.hincrby(key, field, n)
      p.expire(key, KEEP_S)
    }
    await p.exec().catch(() => {})
  }
}

/** The report sender's side: what a day holds, what was sent, and the cluster-wide lock. */
export class TlsReportStore {
  constructor (private readonly redis: Redis) {}

  async domains (day: string): Promise<string[]> {
    return (await this.redis.smembers(dayKey(day, 'domains'))).sort()
  }

  async read (day: string, domain: string): Promise<TlsDayCounts | undefined> {
    const h = await this.redis.hgetall(dayKey(day, `d:${domain}`))
    if (h.policy === undefined) return undefined
    const failures: TlsDayCounts['failures'] = []
    let other = 0
    for (const [field, value] of Object.entries(h)) {
      if (!field.startsWith('f:')) continue
      if (failures.length >= MAX_DETAILS) { other += Number(value); continue }
      try {
        failures.push({ detail: JSON.parse(field.slice(2)) as TlsFailureDetail, count: Number(value) })
      } catch { other += Number(value) }
    }
    if (other > 0) failures.push({ detail: { 'result-type': 'validation-failure' }, count: other })
    return { policy: JSON.parse(h.policy) as TlsPolicyRef, ok: Number(h.ok ?? 0), failures }
  }

  async isSent (day: string, domain: string): Promise<boolean> {
    return (await this.redis.sismember(dayKey(day, 'sent'), domain)) === 1
  }

  async markSent (day: string, domain: string): Promise<void> {
    await this.redis.multi().sadd(dayKey(day, 'sent'), domain).expire(dayKey(day, 'sent'), KEEP_S).exec()
  }

  /** Takes the sender's lock for `ttlMs` unless another holds it; true when `holder` has it. */
  async lock (holder: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(LOCK_KEY, holder, 'PX', ttlMs, 'NX')) === 'OK'
  }

  /** Gives `holder` the lock for `ttlMs` from now, if it still has it or nobody took it since; false when another has it. */
  async renew (holder: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.eval(RENEW, 1, LOCK_KEY, holder, ttlMs)) === 1
  }

  /** Gives the lock back, only if `holder` still has it. */
  async unlock (holder: string): Promise<void> {
    await this.redis.eval(UNLOCK, 1, LOCK_KEY, holder)
  }
}
