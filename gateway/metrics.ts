/**
 * Prometheus text exposition for the few series that matter at the edge. Label sets are bounded:
 * routes come from the route table, statuses from the error table.
 */
const BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500]

class Histogram {
  readonly counts = new Array<number>(BUCKETS_MS.length + 1).fill(0)
  sum = 0
  observe (ms: number): void {
    let i = 0
    while (i < BUCKETS_MS.length && ms > BUCKETS_MS[i]!) i++
    this.counts[i]!++
    this.sum += ms
  }
}

/** One route's series: found with one map lookup per request, no label string built on the hot path. */
class RouteSeries {
  readonly byStatus = new Map<number, number>()
  readonly duration = new Histogram()
}

export class Metrics {
  private readonly routes = new Map<string, RouteSeries>()
  private readonly gauges = new Map<string, () => number>()
  private readonly families = new Map<string, { label: string, read: () => ReadonlyMap<string, number> }>()
  readonly counters = new Map<string, number>()

  request (route: string, status: number, ms: number): void {
    let series = this.routes.get(route)
    if (series === undefined) this.routes.set(route, series = new RouteSeries())
    series.byStatus.set(status, (series.byStatus.get(status) ?? 0) + 1)
    series.duration.observe(ms)
  }

  inc (name: string, by = 1): void {
    this.counters.set(name, (this.counters.get(name) ?? 0) + by)
  }

  gauge (name: string, read: () => number): void {
    this.gauges.set(name, read)
  }

  /** Counters another part of the process keeps (one value per label value), read at each scrape. */
  counterFamily (name: string, label: string, read: () => ReadonlyMap<string, number>): void {
    this.families.set(name, { label, read })
  }

  render (): string {
    const out: string[] = []
    out.push('# HELP outbox_http_requests_total HTTP requests by route and status.', '# TYPE outbox_http_requests_total counter')
    for (const [route, series] of this.routes) {
      for (const [status, n] of series.byStatus) out.push(`outbox_http_requests_total{route="${route}",status="${status}"} ${n}`)
    }
    out.push('# HELP outbox_http_request_duration_ms Time from request to response.', '# TYPE outbox_http_request_duration_ms histogram')
    for (const [route, { duration: h }] of this.routes) {
      let cumulative = 0
      for (let i = 0; i < BUCKETS_MS.length; i++) {
        cumulative += h.counts[i]!
        out.push(`outbox_http_request_duration_ms_bucket{route="${route}",le="${BUCKETS_MS[i]}"} ${cumulative}`)
      }
      cumulative += h.counts[BUCKETS_MS.length]!
      out.push(`outbox_http_request_duration_ms_bucket{route="${route}",le="+Inf"} ${cumulative}`)
      out.push(`outbox_http_request_duration_ms_sum{route="${route}"} ${h.sum}`)
      out.push(`outbox_http_request_duration_ms_count{route="${route}"} ${cumulative}`)
    }
    for (const [name, n] of this.counters) out.push(`# TYPE ${name} counter`, `${name} ${n}`)
    for (const [name, read] of this.gauges) out.push(`# TYPE ${name} gauge`, `${name} ${read()}`)
    for (const [name, { label, read }] of this.families) {
      out.push(`# TYPE ${name} counter`)
      for (const [value, n] of read()) out.push(`${name}{${label}="${value}"} ${n}`)
    }
    const mem = process.memoryUsage()
    out.push('# TYPE process_resident_memory_bytes gauge', `process_resident_memory_bytes ${mem.rss}`)
    return out.join('\n') + '\n'
  }
}
