/**
 * Throughput and latency of POST /v1/messages/send through the whole Outbox gateway, next to a bare
 * uWebSockets.js server that only parses the JSON body and a Fastify server doing the same send path.
 *
 *   node dist/bench/gateway.js            ~10 s per measurement; prints the JSON result and a markdown table
 *   node dist/bench/gateway.js --quick    ~2 s per measurement
 *   npm run bench -- gateway              the same measurements, recorded in bench/results/gateway.json
 *
 * Every server under test runs in its own child process; autocannon runs in this one; NATS and Redis are
 * spawned for the run. Nothing outside loopback is touched.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import { cpus } from 'node:os'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { STREAM_OUTBOUND } from '../protocol/mod.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { serve, type Target } from './gateway_targets.ts'
import { scrapeLoop } from './scrape.ts'

export interface GatewayBenchOptions {
  quick?: boolean
  /** Seconds per measurement; default 10, or 2 with `quick`. */
  durationS?: number
  /** Measure the Outbox gateway a second time while `GET /metrics` is fetched every this many ms. */
  scrapeMs?: number
  connections?: number[]
  /**
   * Connection counts at which Outbox and Fastify are also measured with a fresh Idempotency-Key on every request;
   * default [100], none with `quick`. Bare uWS is not: building a request per key caps the load generator itself.
   */
  keyedConnections?: number[]
  /** Which servers to measure; default all four. Ratios need bare, fastify and full. */
  targets?: Target[]
  /**
   * Where to write the raw JSON result; by default nowhere. `npm run bench -- gateway` records the run in
   * bench/results/gateway.json in the format every benchmark shares, which this raw form must not overwrite.
   */
  out?: string | false
  log?: (line: string) => void
}

export interface Measurement {
  target: Target
  connections: number
  /** Every request carried its own Idempotency-Key. */
  idempotency_key: boolean
  requests_per_s: number
  latency_p50_ms: number
  latency_p99_ms: number
  requests: number
  non_2xx: number
  errors: number
  /** CPU time of the server process per request: unlike req/s, this barely moves when other work shares the cores. */
  server_cpu_us_per_request: number
  /** CPU used during the measurement, in % of one core, per process. */
  cpu_pct: { server: number, nats: number, redis: number, load_generator: number }
  /** Set when `GET /metrics` was fetched this often during the measurement (as a Prometheus scrape would). */
  scrape_every_ms?: number
}

export interface GatewayBenchResult {
  benchmark: 'gateway'
  date: string
  duration_s: number
  machine: { cpus: number, node: string, load_average_before: string, load_average_after?: string, busiest_other_processes: string[] }
  measurements: Measurement[]
  /** `floor_*` when the floor target was measured: how far the two round trips alone get, and the full path beside them. */
  ratios: Array<{
    connections: number, full_over_bare: number, full_over_fastify: number, floor_over_bare?: number, full_over_floor?: number
  }>
  /** Outbox over Fastify when every request carries its own Idempotency-Key. */
  keyed_ratios: Array<{ connections: number, full_over_fastify: number }>
  targets: { full_ge_25pct_of_bare: boolean, full_ge_1_5x_fastify: boolean, full_p99_lt_25ms_at_100: boolean }
}

const TARGETS: Target[] = ['bare', 'fastify-bare', 'floor', 'fastify', 'full']
/** Those the ratios need; `fastify-bare` shows what the HTTP layer alone costs, `floor` what two round trips cost. */
const RATIO_TARGETS: Target[] = ['bare', 'fastify', 'full']

interface Child { proc: ChildProcess, port: number, key: string, domain: string }

async function startChild (target: Target, natsUrl: string, redisUrl: string): Promise<Child> {
  // BENCH_NODE_ARGS (e.g. "--cpu-prof") goes to the server processes only, for profiling them.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean)
  const proc = spawn(process.execPath, [...nodeArgs, fileURLToPath(import.meta.url), '--serve', target], {
    env: { ...process.env, BENCH_NATS_URL: natsUrl, BENCH_REDIS_URL: redisUrl },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  const line = await new Promise<string>((resolve, reject) => {
    const rl = createInterface({ input: proc.stdout! })
    rl.once('line', (l) => { rl.close(); resolve(l) })
    proc.once('exit', (code) => reject(new Error(`${target} server exited with ${code}`)))
  })
  const { port, key, domain } = JSON.parse(line) as { port: number, key: string, domain: string }
  return { proc, port, key, domain }
}

async function stopChild (c: Child): Promise<void> {
  if (c.proc.exitCode !== null) return
  await new Promise<void>((resolve) => {
    c.proc.once('exit', () => resolve())
    c.proc.kill('SIGTERM')
  })
}

function sendBody (domain: string): string {
  return JSON.stringify({
    from: `Acme <orders@${domain}>`,
    to: 'customer@example.net',
    subject: 'Your order #10234 has shipped',
    html: '<p>Hello Ann,</p><p>Your order <b>#10234</b> is on its way. Track it <a href="https://example.net/t/10234">here</a>.</p>',
    text: 'Hello Ann, your order #10234 is on its way: https://example.net/t/10234',
    metadata: { order_id: '10234', customer_id: 'c_8812' }
  })
}

let loadRun = 0

/**
 * With `keyed`, every request carries its own Idempotency-Key, as a careful client sends them, so the whole path
 * runs (claim, publish, stored response). The load generator then builds each request anew, which costs it more.
 */
async function load (c: Child, connections: number, durationS: number, keyed: boolean): Promise<autocannon.Result> {
  const headers = { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' }
  const url = `http://127.0.0.1:${c.port}/v1/messages/send`
  if (!keyed) return await autocannon({ url, method: 'POST', connections, duration: durationS, headers, body: sendBody(c.domain) })
  const prefix = `bench-${process.pid}-${++loadRun}-`
  let n = 0
  return await autocannon({
    url,
    connections,
    duration: durationS,
    requests: [{
      method: 'POST',
      body: sendBody(c.domain),
      setupRequest: (req) => ({ ...req, headers: { ...headers, 'idempotency-key': prefix + String(n++) } })
    }]
  })
}

/** Load average and the busiest processes before the run, so a reader can judge the figures. */
function environmentNote (): GatewayBenchResult['machine'] {
  let busiest: string[] = []
  let loadAvg = ''
  try {
    loadAvg = readFileSync('/proc/loadavg', 'utf8').trim()
    busiest = execFileSync('ps', ['-eo', 'pcpu,args', '--sort=-pcpu'], { encoding: 'utf8' })
      .split('\n').slice(1, 7).map((l) => l.trim().slice(0, 110)).filter(Boolean)
  } catch {}
  return { cpus: cpus().length, node: process.version, load_average_before: loadAvg, busiest_other_processes: busiest }
}

/** utime + stime of a process in clock ticks (100 per second on Linux). */
function cpuTicks (pid: number | undefined): number {
  if (pid === undefined) return 0
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

function pidOf (s: ServerProcess): number | undefined {
  return (s as unknown as { child?: ChildProcess }).child?.pid
}

function round (n: number, digits = 2): number {
  const f = 10 ** digits
  return Math.round(n * f) / f
}

export async function runGatewayBench (opts: GatewayBenchOptions = {}): Promise<GatewayBenchResult> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'))
  const durationS = opts.durationS ?? (opts.quick === true ? 2 : 10)
  const connectionCounts = opts.connections ?? [100, 10]
  const keyedConnections = opts.keyedConnections ?? (opts.quick === true ? [] : [100])
  const machine = environmentNote()
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis()
  const nc = await connect({ servers: nats.url })
  const measurements: Measurement[] = []
  const children = new Map<Target, Child>()
  try {
    // All servers start first and the measurements alternate between them, so that whatever else shares the
    // machine weighs on each of them alike and the ratios stay fair.
    const targets = opts.targets ?? TARGETS
    const started = await Promise.all(targets.map(async (target) => await startChild(target, nats.url, redis.url)))
    targets.forEach((target, i) => children.set(target, started[i]!))
    const plan: Array<{ target: Target, connections: number, keyed: boolean, scrapeMs?: number }> = []
    for (const connections of connectionCounts) {
      for (const target of targets) {
        plan.push({ target, connections, keyed: false })
        if (target === 'full' && opts.scrapeMs !== undefined) plan.push({ target, connections, keyed: false, scrapeMs: opts.scrapeMs })
      }
    }
    for (const connections of keyedConnections) {
      for (const target of targets) if (target === 'full' || target === 'fastify') plan.push({ target, connections, keyed: true })
    }
    for (const { target, connections, keyed, scrapeMs } of plan) {
      const child = children.get(target)!
      await load(child, connections, Math.max(0.5, Math.round(durationS / 4)), keyed) // warm-up: JIT, connection pools
      if (target === 'full' || target === 'fastify' || target === 'floor') await (await jetstreamManager(nc)).streams.purge(STREAM_OUTBOUND)
      const pids = { server: child.proc.pid, nats: pidOf(nats), redis: pidOf(redis), load_generator: process.pid }
      const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTicks(pid)]))
      const started = performance.now()
      const scraping = scrapeMs !== undefined
        ? scrapeLoop([{ name: 'Outbox gateway', url: `http://127.0.0.1:${child.port}/metrics` }], scrapeMs)
        : undefined
      const r = await load(child, connections, durationS, keyed)
      const scraped = (await scraping?.stop())?.[0]
      if (scraped !== undefined && scraped.failed > 0) {
        throw new Error(`GET /metrics failed ${scraped.failed} time(s): ${scraped.firstError ?? ''}`)
      }
      const scrapes = scraped?.scrapes
      const elapsedS = (performance.now() - started) / 1000
      const cpu = Object.fromEntries(
        Object.entries(pids).map(([k, pid]) => [k, round((cpuTicks(pid) - before[k]!) / elapsedS, 0)])
      ) as Measurement['cpu_pct']
      const m: Measurement = {
        target,
        connections,
        idempotency_key: keyed,
        requests_per_s: round(r.requests.average, 0),
        latency_p50_ms: r.latency.p50,
        latency_p99_ms: r.latency.p99,
        requests: r.requests.total,
        non_2xx: r.non2xx,
        errors: r.errors + r.timeouts,
        server_cpu_us_per_request: round(cpu.server * 10_000 / Math.max(1, r.requests.average), 0),
        cpu_pct: cpu,
        ...(scrapeMs !== undefined ? { scrape_every_ms: scrapeMs } : {})
      }
      measurements.push(m)
      const variant = `${keyed ? ' +key' : ''}${scrapes !== undefined ? ` +${scrapes} scrapes of /metrics` : ''}`
      log(
        `${target.padEnd(7)} c=${String(connections).padEnd(3)}${variant} ${String(m.requests_per_s).padStart(7)} req/s  ` +
        `p50 ${m.latency_p50_ms} ms  p99 ${m.latency_p99_ms} ms  non-2xx ${m.non_2xx}  errors ${m.errors}  ` +
        `server ${m.server_cpu_us_per_request} µs CPU/req  ` +
        `cpu% server ${cpu.server} nats ${cpu.nats} redis ${cpu.redis} autocannon ${cpu.load_generator}`
      )
    }
  } finally {
    for (const child of children.values()) await stopChild(child)
    await nc.close()
    await nats.dispose()
    await redis.dispose()
  }
  try { machine.load_average_after = readFileSync('/proc/loadavg', 'utf8').trim() } catch {}
  const get = (t: Target, c: number, keyed = false): Measurement | undefined => measurements.find((m) =>
    m.target === t && m.connections === c && m.idempotency_key === keyed && m.scrape_every_ms === undefined)
  const rps = (t: Target, c: number, keyed = false): number => get(t, c, keyed)!.requests_per_s
  const complete = RATIO_TARGETS.every((t) => connectionCounts.every((c) => get(t, c) !== undefined))
  const ratios = !complete ? [] : connectionCounts.map((c) => ({
    connections: c,
    full_over_bare: round(rps('full', c) / rps('bare', c)),
    full_over_fastify: round(rps('full', c) / rps('fastify', c)),
    ...(get('floor', c) !== undefined
      ? { floor_over_bare: round(rps('floor', c) / rps('bare', c)), full_over_floor: round(rps('full', c) / rps('floor', c)) }
      : {})
  }))
  const keyedRatios = keyedConnections.filter((c) => get('full', c, true) !== undefined && get('fastify', c, true) !== undefined)
    .map((c) => ({ connections: c, full_over_fastify: round(rps('full', c, true) / rps('fastify', c, true)) }))
  const at100 = ratios.find((r) => r.connections === 100) ?? ratios[0] ?? { full_over_bare: 0, full_over_fastify: 0 }
  const result: GatewayBenchResult = {
    benchmark: 'gateway',
    date: new Date().toISOString(),
    duration_s: durationS,
    machine,
    measurements,
    ratios,
    keyed_ratios: keyedRatios,
    targets: {
      full_ge_25pct_of_bare: at100.full_over_bare >= 0.25,
      full_ge_1_5x_fastify: at100.full_over_fastify >= 1.5,
      full_p99_lt_25ms_at_100: (get('full', 100)?.latency_p99_ms ?? Infinity) < 25
    }
  }
  if (opts.out !== undefined && opts.out !== false) {
    mkdirSync(dirname(opts.out), { recursive: true })
    writeFileSync(opts.out, JSON.stringify(result, null, 2) + '\n')
  }
  return result
}

export function markdownTable (r: GatewayBenchResult): string {
  const rows = [
    '| server | connections | Idempotency-Key | req/s | p50 ms | p99 ms | non-2xx | server CPU µs/req | ' +
      'CPU % server / nats / redis / autocannon |',
    '|---|---:|---|---:|---:|---:|---:|---:|---|'
  ]
  for (const m of r.measurements) {
    const cpu = `${m.cpu_pct.server} / ${m.cpu_pct.nats} / ${m.cpu_pct.redis} / ${m.cpu_pct.load_generator}`
    rows.push(
      `| ${m.target} | ${m.connections} | ${m.idempotency_key ? 'fresh per request' : 'none'} | ${m.requests_per_s} | ` +
      `${m.latency_p50_ms} | ${m.latency_p99_ms} | ${m.non_2xx + m.errors} | ${m.server_cpu_us_per_request} | ${cpu} |`
    )
  }
  rows.push('', '| connections | full / bare | full / fastify | floor / bare | full / floor |', '|---:|---:|---:|---:|---:|')
  for (const x of r.ratios) {
    rows.push(
      `| ${x.connections} | ${x.full_over_bare} | ${x.full_over_fastify} | ${x.floor_over_bare ?? ''} | ${x.full_over_floor ?? ''} |`
    )
  }
  for (const x of r.keyed_ratios) rows.push(`| ${x.connections}, with Idempotency-Key | | ${x.full_over_fastify} | | |`)
  return rows.join('\n')
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]
if (isMain) {
  const serveAt = process.argv.indexOf('--serve')
  if (serveAt !== -1) {
    await serve(process.argv[serveAt + 1] as Target, process.env.BENCH_NATS_URL!, process.env.BENCH_REDIS_URL!)
  } else {
    const only = process.argv.find((a) => a.startsWith('--targets='))?.slice('--targets='.length).split(',') as Target[] | undefined
    const result = await runGatewayBench({ quick: process.argv.includes('--quick'), ...(only !== undefined ? { targets: only } : {}) })
    process.stdout.write(JSON.stringify(result, null, 2) + '\n\n' + markdownTable(result) + '\n')
    const machine = result.machine
    process.stdout.write(
      `\nAlso running: load average ${machine.load_average_before} before, ${machine.load_average_after ?? '?'} after ` +
      `(${machine.cpus} cores); busiest processes at the start:\n  ${machine.busiest_other_processes.join('\n  ')}\n`
    )
  }
}
