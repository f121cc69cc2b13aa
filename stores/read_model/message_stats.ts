import { hourBucket } from './message_store_keys.ts'

/**
 * The counters GET /v1/stats reports: `sent` is messages handed to delivery (at acceptance, or for a scheduled message
 * when the engine takes it up), the rest are events of that type.
 */
export const STATS_COUNTERS = ['sent', 'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained'] as const
export type StatsCounts = Record<(typeof STATS_COUNTERS)[number], number>
export type StatsInterval = 'hour' | 'day'

export interface StatsResult {
  counts: StatsCounts
  /** One entry per hour or UTC day, oldest first, when an interval was asked for. */
  series?: Array<{ start: string, counts: StatsCounts }>
}

const HOUR_MS = 3600_000
const DAY_MS = 24 * HOUR_MS

function zero (): StatsCounts {
  return { sent: 0, delivered: 0, bounced: 0, deferred: 0, opened: 0, clicked: 0, unsubscribed: 0, complained: 0 }
}

function add (into: StatsCounts, hash: Record<string, string>): void {
  for (const c of STATS_COUNTERS) {
    const v = hash[c]
    if (v !== undefined) into[c] += Number(v)
  }
}

/**
 * Sums the hourly counter hashes of every UTC hour that overlaps [fromMs, toMs). The hour is the
 * resolution: a range that starts mid-hour counts that whole hour. Reads go out together (one pipeline).
 */
export async function statsOver (
  read: (hour: string) => Promise<Record<string, string>>, fromMs: number, toMs: number, interval?: StatsInterval
): Promise<StatsResult> {
  const hours: number[] = []
  for (let h = Math.floor(fromMs / HOUR_MS) * HOUR_MS; h < toMs; h += HOUR_MS) hours.push(h)
  const hashes = await Promise.all(hours.map((h) => read(hourBucket(h))))
  const counts = zero()
  for (const hash of hashes) add(counts, hash)
  if (interval === undefined) return { counts }
  const step = interval === 'hour' ? HOUR_MS : DAY_MS
  const series: Array<{ start: string, counts: StatsCounts }> = []
  let current: { start: string, counts: StatsCounts } | undefined
  let currentStart = -1
  for (let i = 0; i < hours.length; i++) {
    const start = Math.floor(hours[i]! / step) * step
    if (start !== currentStart) {
      current = { start: new Date(start).toISOString(), counts: zero() }
      currentStart = start
      series.push(current)
    }
    add(current!.counts, hashes[i]!)
  }
  return { counts, series }
}
