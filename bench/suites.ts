import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runGatewayBench, type Measurement } from './gateway.ts'
import { runEngineBench } from './engine.ts'
import { runWebhookBench, webhookMarkdown, relativeDrop, SLOW_MS } from './webhooks.ts'
import { runInboundBench } from './inbound.ts'
import { scrapeMsArg } from './scrape.ts'
import type { BenchOptions, BenchResult, Chart, Table } from './types.ts'

/**
 * The gateway, engine, webhook and inbound benchmarks as harness entries: each keeps its own runner (they also run
 * standalone) and is turned into tables, charts and pass/fail checks here. A check fails only when something
 * stopped working (errors, lost messages); speed targets are reported, never failed, because the machine is shared.
 */

const TARGET_LABEL = {
  full: 'Outbox gateway',
  fastify: 'Fastify, same send path',
  bare: 'bare uWS, JSON parse only',
  'fastify-bare': 'bare Fastify, JSON parse only',
  floor: 'uWS + GCRA script + JetStream publish only'
} as const

function result (name: string, title: string, quick: boolean, fields: Partial<BenchResult> & { summary: string }): BenchResult {
  const failures = fields.failures ?? []
  return { name, title, quick, passed: failures.length === 0, tables: [], charts: [], notes: [], duration_s: 0, ...fields, failures }
}

/** Throughput and p50/p99 against connections, one series per server: the charts the gateway and curve share. */
export function concurrencyCharts (what: string, ms: Measurement[]): Chart[] {
  const xs = [...new Set(ms.map((m) => m.connections))].sort((a, b) => a - b)
  const targets = [...new Set(ms.map((m) => m.target))]
  const pick = (t: string, c: number): Measurement | undefined => ms.find((m) => m.target === t && m.connections === c)
  return [
    {
      title: `${what}: accepted requests/s by connections`,
      kind: 'line',
      xLabel: 'connections',
      yLabel: 'requests/s',
      x: xs,
      series: targets.map((t) => ({ name: TARGET_LABEL[t], values: xs.map((c) => pick(t, c)?.requests_per_s ?? 0) }))
    },
    {
      title: `${what}: latency p50 / p99 by connections`,
      kind: 'line',
      xLabel: 'connections',
      yLabel: 'ms',
      x: xs,
      series: targets.flatMap((t) => [
        { name: `${t} p50`, values: xs.map((c) => pick(t, c)?.latency_p50_ms ?? 0) },
        { name: `${t} p99`, values: xs.map((c) => pick(t, c)?.latency_p99_ms ?? 0) }
      ])
    }
  ]
}

export function measurementTable (title: string, ms: Measurement[]): Table {
  return {
    title,
    columns: [
      'server', 'connections', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx + errors', 'server CPU µs/req',
      'CPU % server / nats / redis / autocannon'
    ],
    rows: ms.map((m) => [
      TARGET_LABEL[m.target] + (m.idempotency_key ? ', fresh Idempotency-Key per request' : '') +
        (m.scrape_every_ms !== undefined ? `, GET /metrics every ${m.scrape_every_ms} ms` : ''),
      m.connections, m.requests_per_s, m.latency_p50_ms, m.latency_p99_ms, m.non_2xx + m.errors, m.server_cpu_us_per_request,
      `${m.cpu_pct.server} / ${m.cpu_pct.nats} / ${m.cpu_pct.redis} / ${m.cpu_pct.load_generator}`
    ])
  }
}

export async function gatewaySuite (opts: BenchOptions): Promise<BenchResult> {
  const connections = opts.quick ? [10] : [10, 100]
  const durationS = opts.quick ? 1 : 10
  let done = 0
  const keyedConnections = opts.quick ? [] : [100]
  opts.progress(0, 'starting servers')
  // `--scrape-ms=1000`: the Outbox gateway is measured once more while /metrics is scraped at that interval
  const scrapeMs = scrapeMsArg(opts.args)
  const steps = connections.length * (5 + (scrapeMs !== undefined ? 1 : 0)) + keyedConnections.length * 2
  const r = await runGatewayBench({
    quick: opts.quick,
    durationS,
    connections,
    keyedConnections,
    out: false,
    ...(scrapeMs !== undefined ? { scrapeMs } : {}),
    log: (line) => { opts.progress(++done / steps, line.split(/\s+/).slice(0, 2).join(' ')) }
  })
  const failures = r.measurements.filter((m) => (m.target === 'full' || m.target === 'fastify') && m.non_2xx + m.errors > 0)
    .map((m) => `${m.target} at ${m.connections} connections: ${m.non_2xx} non-2xx, ${m.errors} errors`)
  const full = (c: number): Measurement | undefined => r.measurements.find((m) =>
    m.target === 'full' && m.connections === c && !m.idempotency_key && m.scrape_every_ms === undefined)
  const top = connections[connections.length - 1]!
  const ratio = r.ratios.find((x) => x.connections === top)
  const f = full(top)
  const floor = ratio?.floor_over_bare !== undefined
    ? `; the two round trips alone (GCRA script, JetStream publish) reach ${Math.round(ratio.floor_over_bare * 100)} % of bare uWS ` +
      `and Outbox ${Math.round((ratio.full_over_floor ?? 0) * 100)} % of them`
    : ''
  const summary = f === undefined || ratio === undefined
    ? 'incomplete'
    : `POST /v1/messages/send at ${top} connections: ${f.requests_per_s} req/s, p50 ${f.latency_p50_ms} ms, ` +
      `p99 ${f.latency_p99_ms} ms, ${f.server_cpu_us_per_request} µs server CPU per request; ` +
      `${Math.round(ratio.full_over_bare * 100)} % of bare uWS, ${ratio.full_over_fastify}× Fastify${floor}`
  const met = (ok: boolean): string => ok ? 'met' : 'not met'
  const notes = [
    'Servers are measured alternately in one run (same NATS, Redis and load generator), so the ratios compare like with like; ' +
      'absolute req/s move with whatever else shares the cores, CPU µs per request much less.',
    `Targets at ${top} connections: ≥ 25 % of bare uWS: ${met(r.targets.full_ge_25pct_of_bare)}; ` +
      `≥ 1.5× Fastify: ${met(r.targets.full_ge_1_5x_fastify)}; ` +
      `p99 < 25 ms at 100 connections: ${met(r.targets.full_p99_lt_25ms_at_100)}` +
      `${opts.quick ? ' (quick mode: 1 s samples at 10 connections, not a measurement)' : ''}.`,
    `Busiest processes when the run started: ${r.machine.busiest_other_processes.slice(0, 4).join('; ')}`
  ]
  return result('gateway', 'Send API throughput: Outbox gateway vs bare uWS vs Fastify', opts.quick, {
    summary,
    failures,
    notes,
    tables: [
      measurementTable(`POST /v1/messages/send, ${durationS} s per measurement after a warm-up`, r.measurements),
      {
        title: 'Ratios (same run)',
        columns: [
          'connections', 'Outbox / bare uWS', 'Outbox / Fastify', 'two round trips only / bare uWS', 'Outbox / two round trips only'
        ],
        rows: [
          ...r.ratios.map((x) => [x.connections, x.full_over_bare, x.full_over_fastify, x.floor_over_bare ?? '', x.full_over_floor ?? '']),
          ...r.keyed_ratios.map((x) => [`${x.connections}, fresh Idempotency-Key per request`, '', x.full_over_fastify, '', ''])
        ]
      }
    ],
    charts: concurrencyCharts('POST /v1/messages/send', r.measurements.filter((m) => !m.idempotency_key && m.scrape_every_ms === undefined))
  })
}

export async function engineSuite (opts: BenchOptions): Promise<BenchResult> {
  const r = await runEngineBench({
    quick: opts.quick, sizes: opts.quick ? [200] : [1000, 10_000, 100_000], progress: opts.progress
  })
  const rows = r.rows
  const failures = rows.filter((x) => !(x.msgs_per_s > 0)).map((x) => `${x.mode} ${x.messages}: no throughput`)
  const biggest = rows.filter((x) => x.mode === 'engine').at(-1)
  const n = String(biggest?.messages ?? '')
  return result('engine', 'Delivery engine: JetStream → engine → SMTP sink vs a plain nodemailer loop', opts.quick, {
    summary: biggest === undefined
      ? 'no engine row'
      : `${biggest.messages} messages delivered at ${biggest.msgs_per_s} msgs/s, ${biggest.cpu_us_per_msg} µs CPU per message; ` +
        `${Math.round((r.engine_vs_loop[n] ?? 0) * 100)} % of a plain pooled nodemailer loop`,
    failures,
    tables: [{
      title: '5 KB DKIM-signed message into a local smtp-server sink (sink in its own process)',
      columns: ['mode', 'messages', 'seconds', 'msgs/s', 'CPU µs/msg', 'peak RSS MB'],
      rows: rows.map((x) => [x.mode, x.messages, x.seconds, x.msgs_per_s, x.cpu_us_per_msg, x.peak_rss_mb])
    }],
    charts: [{
      title: 'Delivered messages/s',
      kind: 'bar',
      xLabel: 'messages',
      yLabel: 'msgs/s',
      x: [...new Set(rows.map((x) => x.messages))],
      series: (['plain_loop', 'engine'] as const)
        .map((mode) => ({ name: mode, values: rows.filter((x) => x.mode === mode).map((x) => x.msgs_per_s) }))
    }],
    notes: [
      'CPU and RSS are of the sending process (engine threads included); nats-server, redis-server and the sink are not counted.'
    ]
  })
}

export async function webhooksSuite (opts: BenchOptions): Promise<BenchResult> {
  opts.progress(0.05, 'bare undici loop, the floor, then four webhook runs, per round')
  const r = await runWebhookBench({
    quick: opts.quick, events: opts.quick ? 500 : 20_000, out: join(tmpdir(), `ob-bench-webhooks-${process.pid}.json`)
  })
  process.stdout.write(JSON.stringify(r) + '\n\n' + webhookMarkdown(r) + '\n')
  const delivered = r.webhooks_per_s > 0 && r.floor_per_s > 0 &&
    r.healthy_with_dead_endpoint_per_s > 0 && r.healthy_with_slow_endpoint_per_s > 0
  const failures = delivered ? [] : ['no webhook deliveries']
  const pct = (x: number): number => Math.round(x * 100)
  return result('webhooks', 'Signed webhook deliveries vs a bare undici loop', opts.quick, {
    summary: `${r.webhooks_per_s} signed deliveries/s (${pct(r.ratio_to_bare)} % of a bare undici loop at ${r.bare_undici_per_s}/s; ` +
      `the floor of any durable delivery, ${r.floor_per_s}/s, is ${pct(r.floor_over_bare)} %, ` +
      `Outbox ${pct(r.webhooks_over_floor)} % of it); ` +
      `with a dead endpoint on every event a healthy one's rate is ${relativeDrop(r.dead_endpoint_drop)}, ` +
      `with a slow one ${relativeDrop(r.slow_endpoint_drop)} (medians of ${r.rounds} round(s))`,
    failures,
    tables: [{
      title: `${r.events} events, ${r.concurrency} concurrent deliveries, local HTTPS receiver; medians of ${r.rounds} round(s)`,
      columns: ['measure', 'per second'],
      rows: [
        ['bare undici loop (signed bodies)', r.bare_undici_per_s],
        ['floor: JetStream read, sign, POST, acknowledge', r.floor_per_s],
        ['Outbox webhook deliveries (endpoint A alone)', r.webhooks_per_s],
        ['Outbox, endpoint A, dead endpoint B on every event', r.healthy_with_dead_endpoint_per_s],
        [`Outbox, endpoint A, slow endpoint B (${SLOW_MS / 1000} s) on every event`, r.healthy_with_slow_endpoint_per_s],
        ['Outbox, endpoint A, second healthy endpoint B on every event', r.healthy_with_second_healthy_endpoint_per_s]
      ]
    }, {
      title: 'Per round',
      columns: ['round', 'bare', 'floor', 'Outbox', 'A with dead B', 'A with slow B', 'A with healthy B'],
      rows: r.per_round.map((x, i) => [i + 1, x.bare, x.floor, x.outbox, x.dead, x.slow, x.healthy])
    }],
    charts: [{
      title: 'Webhook deliveries/s',
      kind: 'bar',
      xLabel: 'run',
      yLabel: 'per second',
      x: ['bare undici', 'floor', 'Outbox (A alone)', 'A with dead B', 'A with slow B', 'A with healthy B'],
      series: [{
        name: 'deliveries/s',
        values: [
          r.bare_undici_per_s, r.floor_per_s, r.webhooks_per_s,
          r.healthy_with_dead_endpoint_per_s, r.healthy_with_slow_endpoint_per_s, r.healthy_with_second_healthy_endpoint_per_s
        ]
      }]
    }]
  })
}

/** 'open pixel GET /t/o/{token}' → 'open pixel'; the inbound rows → 'inbound SMTP' and 'inbound, webhook paused'. */
function shortName (name: string): string {
  if (name.startsWith('inbound')) return name.includes('paused') ? 'inbound, webhook paused' : 'inbound SMTP'
  return name.split(' ').slice(0, 2).join(' ')
}

export async function inboundSuite (opts: BenchOptions): Promise<BenchResult> {
  opts.progress(0.05, 'inbound SMTP rounds, then tracking endpoints')
  const r = await runInboundBench(opts.quick ? { messages: 50, durationS: 1, rounds: 1 } : {})
  const failures = r.rows.filter((x) => !(x.outbox > 0)).map((x) => `${x.name}: no throughput`)
  // The rows and their table on stdout as well, for whoever runs `npm run bench -- inbound` by hand.
  process.stdout.write(JSON.stringify(r.rows, null, 2) + '\n' + r.markdown + '\n')
  const cpu = (us: number | undefined): string => us === undefined ? '' : String(us)
  return result('inbound', 'Inbound SMTP and tracking endpoints vs bare servers', opts.quick, {
    summary: r.rows
      .map((x) => `${shortName(x.name)} ${x.outbox.toFixed(0)} ${x.unit} (${(x.ratio * 100).toFixed(0)} % of bare)`)
      .join('; '),
    failures,
    tables: [{
      title: 'Outbox next to a bare baseline in the same run',
      columns: ['measurement', 'Outbox', 'bare baseline', 'unit', 'Outbox / baseline', 'CPU µs/msg Outbox', 'CPU µs/msg bare'],
      rows: r.rows.map((x) => [
        x.name, Math.round(x.outbox), Math.round(x.baseline), x.unit, `${(x.ratio * 100).toFixed(0)} %`,
        cpu(x.outbox_cpu_us), cpu(x.baseline_cpu_us)
      ])
    }],
    notes: [
      'Inbound CPU per message counts the whole benchmark process (server, sender and receiver threads) plus, for Outbox, ' +
        'its NATS and Redis.'
    ],
    charts: [{
      title: 'Outbox vs bare baseline (% of baseline)',
      kind: 'bar',
      xLabel: 'measurement',
      yLabel: '% of baseline',
      x: r.rows.map((x) => shortName(x.name)),
      series: [{ name: 'Outbox / bare', values: r.rows.map((x) => Math.round(x.ratio * 100)) }]
    }]
  })
}
