import { readdirSync, readFileSync } from 'node:fs'

/** Resident memory (MB) and open file descriptors of a process, from /proc; undefined once it is gone. */
export function processUsage (pid: number | undefined): { rssMb: number, fds: number } | undefined {
  if (pid === undefined) return undefined
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? NaN)
    const fds = readdirSync(`/proc/${pid}/fd`).length
    return { rssMb: Math.round(kb / 102.4) / 10, fds }
  } catch {
    return undefined
  }
}

/** The p-th percentile (0..100) of `values` by nearest rank; 0 for none. */
export function percentile (values: readonly number[], p: number): number {
  if (values.length === 0) return 0
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/** Latencies collected since the last `take()`, so each sample window gets its own p99. */
export class LatencyWindow {
  private values: number[] = []
  private all: number[] = []
  add (ms: number): void { this.values.push(ms); this.all.push(ms) }
  take (): { count: number, p50: number, p99: number } {
    const v = this.values
    this.values = []
    return { count: v.length, p50: percentile(v, 50), p99: percentile(v, 99) }
  }

  overall (): { count: number, p50: number, p99: number, max: number } {
    return {
      count: this.all.length,
      p50: percentile(this.all, 50),
      p99: percentile(this.all, 99),
      max: this.all.reduce((a, b) => Math.max(a, b), 0)
    }
  }
}

/** One point of the time series the soak reports. */
export interface SoakSample {
  t_s: number
  send_p99_ms: number
  read_p99_ms: number
  sends: number
  gateway_rss_mb: number
  gateway_fds: number
  engine_rss_mb: number
  engine_fds: number
  fault: string
}
