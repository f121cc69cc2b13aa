import { runGatewayBench, type Measurement } from './gateway.ts'
import { engineRun, RemoteSink, type BenchRow } from './engine.ts'
import { concurrencyCharts, measurementTable } from './suites.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * The scaling curve: accepted sends/s and p50/p99 through the full gateway path as connections grow, and delivered
 * msgs/s as engine shards grow (OB_ENGINE_SHARDS, OB_ENGINE_THREADS=2), each with the CPU time per message of the
 * server process. On a shared 2-core machine the CPU cost per message is the figure to compare; the rates show
 * where the curve flattens.
 */
const FULL = { connections: [10, 100, 1000], durationS: 8, shards: [1, 2, 4, 8], messages: 3000 }
/** Quick mode only checks that both halves still run: one point each, a non-default shard count. */
const QUICK = { connections: [10], durationS: 1, shards: [2], messages: 100 }
const ENGINE_THREADS = '2'

interface ShardPoint { shards: number, row: BenchRow }

async function engineCurve (shape: typeof FULL, progress: (f: number) => void): Promise<ShardPoint[]> {
  const sink = await RemoteSink.start()
  const points: ShardPoint[] = []
  try {
    for (const [i, shards] of shape.shards.entries()) {
      progress(i / shape.shards.length)
      // Fresh servers per point: stream consumers and org records of one shard count never meet another's.
      const [nats, redis] = await Promise.all([ServerProcess.nats(), ServerProcess.redis()])
      try {
        const env = { OB_ENGINE_SHARDS: String(shards), OB_ENGINE_THREADS: ENGINE_THREADS }
        const row = await engineRun(sink, nats, redis, shape.messages, env)
        points.push({ shards, row })
      } finally {
        await Promise.all([nats.dispose(), redis.dispose()])
      }
    }
  } finally {
    await sink.close()
  }
  return points
}

export async function runCurveBench (opts: BenchOptions): Promise<BenchResult> {
  const shape = opts.quick ? QUICK : FULL
  opts.progress(0, 'gateway: connections')
  let done = 0
  const gw = await runGatewayBench({
    quick: opts.quick,
    durationS: shape.durationS,
    connections: shape.connections,
    keyedConnections: [],
    targets: ['full'],
    out: false,
    log: () => { opts.progress(0.5 * ++done / shape.connections.length, 'gateway: connections') }
  })
  const engine = await engineCurve(shape, (f) => { opts.progress(0.5 + 0.5 * f, 'engine: shards') })
  const failures = [
    ...gw.measurements
      .filter((m) => m.non_2xx + m.errors > 0)
      .map((m) => `gateway at ${m.connections} connections: ${m.non_2xx} non-2xx, ${m.errors} errors`),
    ...engine.filter((p) => !(p.row.msgs_per_s > 0)).map((p) => `engine with ${p.shards} shards delivered nothing`)
  ]
  const at = (c: number): Measurement | undefined => gw.measurements.find((m) => m.connections === c)
  const best = engine.reduce<ShardPoint | undefined>((a, p) => (a === undefined || p.row.msgs_per_s > a.row.msgs_per_s ? p : a), undefined)
  const gatewaySummary = shape.connections
    .map((c) => `${c} conn: ${at(c)?.requests_per_s ?? '?'} req/s (p99 ${at(c)?.latency_p99_ms ?? '?'} ms)`)
    .join(', ')
  const engineSummary = engine.map((p) => `${p.shards} shard${p.shards > 1 ? 's' : ''}: ${p.row.msgs_per_s} msgs/s`).join(', ')
  const bestSummary = best === undefined ? '' : ` (best at ${best.shards}, ${best.row.cpu_us_per_msg} µs CPU/msg)`
  const summary = `gateway ${gatewaySummary}; engine ${engineSummary}${bestSummary}`
  return {
    name: 'curve',
    title: 'Scaling curve: gateway connections and engine shards',
    quick: opts.quick,
    passed: failures.length === 0,
    summary,
    failures,
    duration_s: 0,
    tables: [
      measurementTable(`Full gateway path, POST /v1/messages/send, ${shape.durationS} s per point`, gw.measurements),
      {
        title: `Engine, ${shape.messages} messages per point, OB_ENGINE_THREADS=${ENGINE_THREADS}`,
        columns: ['OB_ENGINE_SHARDS', 'delivered msgs/s', 'seconds', 'CPU µs/msg (engine process)', 'peak RSS MB'],
        rows: engine.map((p) => [p.shards, p.row.msgs_per_s, p.row.seconds, p.row.cpu_us_per_msg, p.row.peak_rss_mb])
      }
    ],
    charts: [
      ...concurrencyCharts('Full gateway path', gw.measurements),
      {
        title: 'Gateway server CPU µs per accepted send',
        kind: 'line',
        xLabel: 'connections',
        yLabel: 'µs CPU / request',
        x: gw.measurements.map((m) => m.connections),
        series: [{ name: 'gateway process', values: gw.measurements.map((m) => m.server_cpu_us_per_request) }]
      },
      {
        title: 'Engine: delivered msgs/s by shard count',
        kind: 'line',
        xLabel: 'OB_ENGINE_SHARDS',
        yLabel: 'msgs/s',
        x: engine.map((p) => p.shards),
        series: [{ name: 'msgs/s', values: engine.map((p) => p.row.msgs_per_s) }]
      },
      {
        title: 'Engine: CPU µs per delivered message by shard count',
        kind: 'line',
        xLabel: 'OB_ENGINE_SHARDS',
        yLabel: 'µs CPU / msg',
        x: engine.map((p) => p.shards),
        series: [{ name: 'engine process', values: engine.map((p) => p.row.cpu_us_per_msg) }]
      }
    ],
    notes: [
      'Gateway CPU is of the gateway process alone (from /proc/<pid>/stat); engine CPU is process.cpuUsage() of the process ' +
        'running the engine, its piscina threads included, while it drains the pre-published backlog.',
      'With 2 cores shared by autocannon, NATS, Redis and the server, rates flatten early; CPU per message shows whether the path ' +
        'itself gets more expensive.'
    ]
  }
}
