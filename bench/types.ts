/** What every benchmark receives from the harness. */
export interface BenchOptions {
  /** CI mode: a few seconds per benchmark, the same checks scaled down. */
  readonly quick: boolean
  /** NATS and Redis spawned by the harness for this run. */
  readonly natsUrl: string
  readonly redisUrl: string
  /** `--name=value` arguments after the benchmark names, e.g. `--path=/v1/billing`. */
  readonly args: Readonly<Record<string, string>>
  /** Reports progress of this benchmark, 0..1, with what it is doing. */
  readonly progress: (fraction: number, label: string) => void
}

export interface Table { title: string, columns: string[], rows: Array<Array<string | number>> }

export interface Chart {
  title: string
  kind: 'line' | 'bar'
  xLabel: string
  yLabel: string
  x: Array<string | number>
  series: Array<{ name: string, values: number[] }>
}

export interface Machine {
  cpus: number
  cpu_model: string
  memory_gb: number
  os: string
  node: string
  nats_server: string
  redis_server: string
}

/** What a benchmark returns; the harness stamps `machine` and `finished_at` and writes it as JSON. */
export interface BenchResult {
  name: string
  title: string
  quick: boolean
  /** false when a promised property did not hold (the run exits non-zero). */
  passed: boolean
  /** One line for README's Performance section. */
  summary: string
  tables: Table[]
  charts: Chart[]
  notes: string[]
  failures: string[]
  duration_s: number
  machine?: Machine
  finished_at?: string
  /** /proc/loadavg (1, 5, 15 min) when the benchmark started and ended: what else was running. */
  load_start?: string
  load_end?: string
}

export type BenchFn = (opts: BenchOptions) => Promise<BenchResult>
