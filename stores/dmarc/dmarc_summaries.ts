import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

/** Message counts a report (or a day of reports) adds up; each is a number of messages. */
export interface DmarcCounts {
  messages: number
  spf_pass: number
  spf_aligned: number
  dkim_pass: number
  dkim_aligned: number
  dmarc_pass: number
  none: number
  quarantine: number
  reject: number
}

export const DMARC_COUNT_FIELDS: ReadonlyArray<keyof DmarcCounts> = [
  'messages', 'spf_pass', 'spf_aligned', 'dkim_pass', 'dkim_aligned', 'dmarc_pass', 'none', 'quarantine', 'reject'
]

/** One aggregate report, read and added up (inbound/dmarc_report.ts). */
export interface DmarcReportSummary {
  reporter: string
  report_id: string
  /** policy_published domain, lower-cased. */
  domain: string
  /** date_range, Unix seconds. */
  begin: number
  end: number
  records: number
  /** Records left out: no valid source address or count, or about another domain. */
  skipped: number
  totals: DmarcCounts
  sources: Array<{ ip: string, messages: number, dmarc_pass: number }>
}

/** One UTC day of a domain's reports, as GET /v1/domains/{id}/dmarc shows it. */
export interface DmarcDay {
  date: string
  reports: number
  reporters: Array<{ name: string, reports: number }>
  counts: DmarcCounts
  /** Most messages first. */
  sources: Array<{ ip: string, messages: number, dmarc_pass: number }>
  /** Messages of sources past the per-day limit of sources kept, added up. */
  other_sources?: { messages: number, dmarc_pass: number }
}

/** Reports one domain takes per UTC day of arrival; more are refused at RCPT TO. */
export const DMARC_REPORTS_PER_DOMAIN_DAY = 200
/** Distinct source addresses kept per domain and day; the messages of more are added up as `other_sources`. */
export const DMARC_SOURCES_PER_DAY = 200
/** Distinct reporters kept per domain and day; more are counted under the name `other`. */
export const DMARC_REPORTERS_PER_DAY = 50
/** How long a day's summary is kept, from its last report. */
export const DMARC_KEEP_DAYS = 90
const DAY_MS = 86_400_000

export type DmarcAddResult = 'added' | 'duplicate' | 'rate_limited'

/**
 * The only module that writes or reads the DMARC summaries in Redis. Per domain (hash tag: one slot per domain):
 *   ob:dmarc:{<domain id>}:d:<YYYY-MM-DD>  hash of one report day: `reports`, each DmarcCounts field, `s:<ip>` and
 *                                          `p:<ip>` (a source's messages and DMARC passes), `ns` (sources kept),
 *                                          `r:<reporter>` and `nr` (reporters kept), `s:` / `p:` with no address
 *                                          for sources past the limit; kept DMARC_KEEP_DAYS
 *   ob:dmarc:{<domain id>}:n:<YYYY-MM-DD>  reports taken on a UTC day of arrival (the rate limit); kept 2 days
 *   ob:dmarc:{<domain id>}:r:<sha256>      a report seen (reporter and report id), so a resent one counts once
 */
const dayKey = (domainId: string, day: string): string => `ob:dmarc:{${domainId}}:d:${day}`
const arrivalKey = (domainId: string, day: string): string => `ob:dmarc:{${domainId}}:n:${day}`
const seenKey = (domainId: string, reporter: string, reportId: string): string =>
  `ob:dmarc:{${domainId}}:r:${createHash('sha256').update(`${reporter}\n${reportId}`).digest('hex')}`

/** `YYYY-MM-DD` of a time in ms, UTC. */
export function utcDay (ms: number): string {
  return new Date(ms).toISOString().slice(0, 10)
}

// KEYS: seen, arrival counter, day hash. ARGV: limit, keep ms, max sources, max reporters, reporter, count of
// totals pairs, then field/value pairs, then ip/messages/passes triples.
const ADD_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'duplicate' end
local limit, keep, maxSources, maxReporters = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if tonumber(redis.call('GET', KEYS[2]) or '0') >= limit then return 'rate_limited' end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], 2 * 86400000)
redis.call('SET', KEYS[1], '1', 'PX', keep)
local h = KEYS[3]
redis.call('HINCRBY', h, 'reports', 1)
local reporter = 'r:' .. ARGV[5]
if redis.call('HEXISTS', h, reporter) == 0 then
  if tonumber(redis.call('HGET', h, 'nr') or '0') < maxReporters then redis.call('HINCRBY', h, 'nr', 1) else reporter = 'r:other' end
end
redis.call('HINCRBY', h, reporter, 1)
local npairs = tonumber(ARGV[6])
local i = 7
for _ = 1, npairs do
  redis.call('HINCRBY', h, ARGV[i], ARGV[i + 1])
  i = i + 2
end
while i <= #ARGV do
  local ip = ARGV[i]
  if ip ~= '' and redis.call('HEXISTS', h, 's:' .. ip) == 0 then
    if tonumber(redis.call('HGET', h, 'ns') or '0') < maxSources then redis.call('HINCRBY', h, 'ns', 1) else ip = '' end
  end
  redis.call('HINCRBY', h, 's:' .. ip, ARGV[i + 1])
  redis.call('HINCRBY', h, 'p:' .. ip, ARGV[i + 2])
  i = i + 3
end
redis.call('PEXPIRE', h, keep)
return 'added'
`

type DmarcRedis = Redis & { ob_dmarc_add: (...args: Array<string | number>) => Promise<DmarcAddResult> }

export class DmarcSummaries {
  private readonly redis: DmarcRedis

  constructor (redis: Redis) {
    const r = redis as unknown as Partial<DmarcRedis>
    if (typeof r.ob_dmarc_add !== 'function') redis.defineCommand('ob_dmarc_add', { numberOfKeys: 3, lua: ADD_LUA })
    this.redis = redis as unknown as DmarcRedis
  }

  /** Reports the domain took today (UTC), for the check at RCPT TO. */
  async takenToday (domainId: string, nowMs = Date.now()): Promise<number> {
    return Number(await this.redis.get(arrivalKey(domainId, utcDay(nowMs))) ?? 0)
  }

  /**
   * Adds a report to the day its date range begins in, once per reporter and report id, unless the domain took
   * `limit` reports today already. Atomic: two copies arriving together count once, and the limit holds.
   */
  async add (
    domainId: string, report: DmarcReportSummary, limit = DMARC_REPORTS_PER_DOMAIN_DAY, nowMs = Date.now()
  ): Promise<DmarcAddResult> {
    // Most messages first, so the sources kept when a day reaches its limit are the busiest of the first reports.
    const sorted = [...report.sources].sort((a, b) => b.messages - a.messages)
    const sources = sorted.slice(0, DMARC_SOURCES_PER_DAY)
    const others = sorted.slice(DMARC_SOURCES_PER_DAY)
    const args: Array<string | number> = [
      limit, DMARC_KEEP_DAYS * DAY_MS, DMARC_SOURCES_PER_DAY, DMARC_REPORTERS_PER_DAY, report.reporter.replace(/\s+/g, ' '),
      DMARC_COUNT_FIELDS.length, ...DMARC_COUNT_FIELDS.flatMap((f) => [f, report.totals[f]]),
      ...sources.flatMap((s) => [s.ip, s.messages, s.dmarc_pass])
    ]
    if (others.length > 0) {
      args.push('', others.reduce((n, s) => n + s.messages, 0), others.reduce((n, s) => n + s.dmarc_pass, 0))
    }
    return await this.redis.ob_dmarc_add(
      seenKey(domainId, report.reporter, report.report_id), arrivalKey(domainId, utcDay(nowMs)),
      dayKey(domainId, utcDay(report.begin * 1000)), ...args
    )
  }

  /** The days from `from` to `to` (inclusive, `YYYY-MM-DD`) that have reports, oldest first. */
  async days (domainId: string, from: string, to: string): Promise<DmarcDay[]> {
    const dates: string[] = []
    for (let t = Date.parse(`${from}T00:00:00Z`); t <= Date.parse(`${to}T00:00:00Z`); t += DAY_MS) dates.push(utcDay(t))
    const p = this.redis.pipeline()
    for (const d of dates) p.hgetall(dayKey(domainId, d))
    const replies = (await p.exec()) ?? []
    const out: DmarcDay[] = []
    dates.forEach((date, i) => {
      const [err, h] = replies[i] ?? [null, {}]
      if (err !== null) throw err
      const day = dayOf(date, h as Record<string, string>)
      if (day !== undefined) out.push(day)
    })
    return out
  }
}

function dayOf (date: string, h: Record<string, string>): DmarcDay | undefined {
  if (h.reports === undefined) return undefined
  const n = (f: string): number => Number(h[f] ?? 0)
  const counts = Object.fromEntries(DMARC_COUNT_FIELDS.map((f) => [f, n(f)])) as unknown as DmarcCounts
  const sources: DmarcDay['sources'] = []
  const reporters: DmarcDay['reporters'] = []
  for (const field of Object.keys(h)) {
    const ip = field.slice(2)
    if (field.startsWith('s:') && ip !== '') sources.push({ ip, messages: n(field), dmarc_pass: n(`p:${ip}`) })
    if (field.startsWith('r:')) reporters.push({ name: field.slice(2), reports: n(field) })
  }
  sources.sort((a, b) => b.messages - a.messages || a.ip.localeCompare(b.ip))
  reporters.sort((a, b) => b.reports - a.reports || a.name.localeCompare(b.name))
  const day: DmarcDay = { date, reports: n('reports'), reporters, counts, sources }
  if (h['s:'] !== undefined) day.other_sources = { messages: n('s:'), dmarc_pass: n('p:') }
  return day
}
