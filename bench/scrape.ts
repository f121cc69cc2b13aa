import { percentile } from './soak_probe.ts'

/**
 * `--scrape-ms=N`: `GET /metrics` fetched from each endpoint every N ms while a benchmark runs, as Prometheus
 * with that interval would (one scrape at a time per endpoint; a scrape that takes longer than the interval
 * delays the next, it never overlaps it).
 */
export interface ScrapeTarget {
  /** What serves it, for the report (e.g. "Outbox (outbox start): HTTP port"). */
  name: string
  url: string
}

export interface ScrapeCount {
  name: string
  url: string
  /** Scrapes answered 200 with a body. */
  scrapes: number
  /** Scrapes that failed (another status, a connection error or no answer within the timeout) and the first reason. */
  failed: number
  firstError?: string
  /** Time of one scrape, request to last body byte (ms). */
  p50Ms: number
  maxMs: number
}

/** A scrape with no answer in this long counts as failed (Prometheus's default scrape timeout). */
const SCRAPE_TIMEOUT_MS = 10_000

/** The `--scrape-ms` argument: undefined when absent; a positive integer, else an error naming it. */
export function scrapeMsArg (args: Readonly<Record<string, string>>): number | undefined {
  const v = args['scrape-ms']
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n <= 0) {
    throw new Error(`--scrape-ms must be a positive whole number of milliseconds, not ${JSON.stringify(v)}`)
  }
  return n
}

/** Scrapes every target every `everyMs` until stopped; `stop` (once or more) waits for the scrapes in flight and resolves to the counts. */
export function scrapeLoop (targets: readonly ScrapeTarget[], everyMs: number): { stop: () => Promise<ScrapeCount[]> } {
  let running = true
  let wake: () => void = () => {}
  const stopped = new Promise<void>((resolve) => { wake = resolve })
  const one = async (t: ScrapeTarget): Promise<ScrapeCount> => {
    const times: number[] = []
    const count: ScrapeCount = { name: t.name, url: t.url, scrapes: 0, failed: 0, p50Ms: 0, maxMs: 0 }
    while (running) {
      const t0 = performance.now()
      try {
        const res = await fetch(t.url, { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) })
        await res.arrayBuffer()
        if (res.status !== 200) throw new Error(`answered ${res.status}`)
        count.scrapes++
        times.push(performance.now() - t0)
      } catch (err) {
        count.failed++
        count.firstError ??= (err as Error).message
      }
      const wait = everyMs - (performance.now() - t0)
      if (wait > 0 && running) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([stopped, new Promise((resolve) => { timer = setTimeout(resolve, wait) })])
        clearTimeout(timer)
      }
    }
    const round = (ms: number): number => Math.round(ms * 10) / 10
    return { ...count, p50Ms: round(percentile(times, 50)), maxMs: round(times.reduce((m, v) => Math.max(m, v), 0)) }
  }
  const loops = Promise.all(targets.map(one))
  return { stop: async () => { running = false; wake(); return await loops } }
}
