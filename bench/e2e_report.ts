import type { Books } from './e2e_accounting.ts'
import { ROLES, type Phase, type Role } from './e2e_phase.ts'
import type { ScrapeCount } from './scrape.ts'
import type { BenchResult, Chart, Table } from './types.ts'

/** The end-to-end bench's figures as tables, charts and target lines. */
export interface PlainPool { messages: number, seconds: number, perS: number, cpuUsPerMsg: number }

export interface E2eFigures {
  quick: boolean
  started: number
  loadStart: number
  senders: number
  plain: PlainPool
  main: Phase
  curve: Phase[]
  books: Books
  pointS: number
  failures: string[]
  /** With `--scrape-ms`: the interval, and each /metrics endpoint's scrapes over the whole run. */
  scrape?: { everyMs: number, counts: ScrapeCount[] }
}

/** Targets: reported as PASS or FAIL with their arithmetic, never failing the run (the machine is shared). */
const TARGET = { deliveredOverPlain: 0.6, cpuMsPerMessage: 1.2, acceptP99Ms: 50 }

const ROLE_LABEL: Record<Role, string> = {
  outbox: 'Outbox (outbox start, every role)',
  nats: 'nats-server',
  redis: 'redis-server',
  sink: 'SMTP sink',
  receiver: 'webhook receiver',
  load_generator: 'load generator (64 senders, undici)'
}
const fmt = (n: number): string => n.toLocaleString('en-US')
const delivered = (p: Phase): number => p.books.accepted - p.books.lost
const usPerMsg = (p: Phase, r: Role): number => Math.round(p.cpuUs[r] / Math.max(1, delivered(p)))
const msPerMsg = (p: Phase): number => ROLES.reduce((s, r) => s + p.cpuUs[r], 0) / Math.max(1, delivered(p)) / 1000
/** ", GET /metrics every N ms" when the run was scraped, else nothing: the label the figures carry. */
const scrapeLabel = (f: Pick<E2eFigures, 'scrape'>): string => f.scrape !== undefined ? `, GET /metrics every ${f.scrape.everyMs} ms` : ''
const scrapeTotal = (s: NonNullable<E2eFigures['scrape']>): number => s.counts.reduce((n, c) => n + c.scrapes, 0)
const statuses = (p: Phase): string => [...p.load.statuses]
  .sort((a, b) => a[0] - b[0])
  .map(([s, n]) => `${s === 0 ? 'connection error' : s}: ${fmt(n)}`)
  .join(', ')

export function targetLines (f: Pick<E2eFigures, 'main' | 'plain' | 'senders'>): string[] {
  const m = f.main
  const ratio = m.deliveredPerS / Math.max(1, f.plain.perS)
  const parts = ROLES.map((r) => (m.cpuUs[r] / Math.max(1, delivered(m)) / 1000).toFixed(3))
  const total = msPerMsg(m)
  const line = (ok: boolean, what: string, arithmetic: string): string =>
    `${ok ? 'PASS' : 'FAIL'} ${what}: ${arithmetic} (target, reported only)`
  const ratioOk = ratio >= TARGET.deliveredOverPlain
  const cpuOk = total <= TARGET.cpuMsPerMessage
  const p99Ok = m.load.latency.p99 <= TARGET.acceptP99Ms
  return [
    line(
      ratioOk, `delivered/s ≥ ${TARGET.deliveredOverPlain} × plain pool`,
      `${fmt(m.deliveredPerS)} ÷ ${fmt(f.plain.perS)} = ${ratio.toFixed(2)} ${ratioOk ? '≥' : '<'} ${TARGET.deliveredOverPlain}`
    ),
    line(
      cpuOk, `CPU per delivered message ≤ ${TARGET.cpuMsPerMessage} ms, all processes`,
      `${parts.join(' + ')} = ${total.toFixed(3)} ms ${cpuOk ? '≤' : '>'} ${TARGET.cpuMsPerMessage} ms (${ROLES.join(' + ')})`
    ),
    line(
      p99Ok, `accept p99 ≤ ${TARGET.acceptP99Ms} ms at ${f.senders} senders`,
      `${m.load.latency.p99} ms ${p99Ok ? '≤' : '>'} ${TARGET.acceptP99Ms} ms`
    )
  ]
}

function headline (f: E2eFigures): Table {
  const m = f.main
  const b = m.books
  const refused = [...m.load.statuses].filter(([s]) => s !== 202).reduce((n, [, c]) => n + c, 0)
  return {
    title: `${fmt(m.load.statuses.get(202) ?? 0)} of ${fmt(m.books.accepted + refused)} sends accepted ` +
      `at ${f.senders} concurrent senders, 5 KB HTML with open and click tracking, while delivering${scrapeLabel(f)}`,
    columns: ['measure', 'value'],
    rows: [
      ['accepted/s while delivering (first send → last 202)', fmt(m.load.acceptedPerS)],
      ['accept latency p50 / p99 / max (ms)', `${m.load.latency.p50} / ${m.load.latency.p99} / ${m.load.latency.max}`],
      ['answers', statuses(m)],
      ['delivered/s (first 202 → last arrival at the sink)', fmt(m.deliveredPerS)],
      ['signed `delivered` webhooks/s (first 202 → last webhook)', `${fmt(m.webhooksPerS)} (${fmt(m.webhooks)} webhooks)`],
      [
        `plain nodemailer pool, 10 connections, no durability, no DKIM (${fmt(f.plain.messages)} messages, ${f.plain.seconds} s)`,
        `${fmt(f.plain.perS)} msgs/s, ${fmt(f.plain.cpuUsPerMsg)} µs CPU per message (sender + sink)`
      ],
      ['Outbox delivered/s ÷ plain pool', (m.deliveredPerS / Math.max(1, f.plain.perS)).toFixed(2)],
      [
        `send → sink latency p50 / p99 / max (ms; ${fmt(b.timedByHeader)} timed by X-Bench-Sent)`,
        `${b.sendToSinkMs.p50} / ${b.sendToSinkMs.p99} / ${b.sendToSinkMs.max}`
      ],
      ['CPU per delivered message, all processes (ms)', msPerMsg(m).toFixed(3)],
      ['lost / duplicated at the sink (this phase)', `${b.lost} / ${b.duplicated}`],
      ['without / with more than one `delivered` webhook (this phase)', `${b.webhookMissing} / ${b.webhookDuplicated}`],
      ['phase length, first send → last delivery and webhook (s)', m.windowS],
      ['load average (1/5/15 min) at start → end of the phase', `${m.loadAverage.start} → ${m.loadAverage.end}`]
    ]
  }
}

function cpuTable (m: Phase): Table {
  const total = ROLES.reduce((s, r) => s + m.cpuUs[r], 0)
  const pctOfCore = (us: number): number => Math.round(us / 1e4 / Math.max(0.1, m.windowS))
  return {
    title: `CPU per delivered message by process (/proc/<pid>/stat), ${fmt(delivered(m))} messages over ${m.windowS} s`,
    columns: ['process', 'CPU s', 'µs per delivered message', '% of one core'],
    rows: [
      ...ROLES.map((r) => [ROLE_LABEL[r], (m.cpuUs[r] / 1e6).toFixed(2), usPerMsg(m, r), pctOfCore(m.cpuUs[r])]),
      ['all processes', (total / 1e6).toFixed(2), Math.round(total / Math.max(1, delivered(m))), pctOfCore(total)]
    ]
  }
}

function scrapeTable (s: NonNullable<E2eFigures['scrape']>): Table {
  return {
    title: `GET /metrics every ${s.everyMs} ms from the start of the run to its end, as Prometheus would scrape: ` +
      `${fmt(scrapeTotal(s))} scrapes`,
    columns: ['process', 'URL', 'scrapes', 'failed', 'scrape time p50 / max (ms)'],
    rows: s.counts.map((c) => [c.name, c.url, fmt(c.scrapes), c.failed, `${c.p50Ms} / ${c.maxMs}`])
  }
}

function curveTable (f: E2eFigures): Table {
  const points = [...f.curve, f.main]
  return {
    title: `Offered rate: ${f.pointS} s of sends per point at up to ${f.senders} senders; the last point is the unbounded run above`,
    columns: [
      'offered /s', 'sent', 'accepted/s', 'accept p50 ms', 'accept p99 ms', 'delivered/s', 'send → sink p99 ms',
      'CPU ms per message, all processes', 'load average at start'
    ],
    rows: points.map((p) => [
      p.offered ?? 'unbounded', fmt(p.load.accepted.length), fmt(p.load.acceptedPerS), p.load.latency.p50, p.load.latency.p99,
      fmt(p.deliveredPerS), p.books.sendToSinkMs.p99, msPerMsg(p).toFixed(3), p.loadAverage.start.split(' ')[0]!
    ])
  }
}

function charts (f: E2eFigures): Chart[] {
  const points = [...f.curve, f.main]
  const x = points.map((p) => p.offered ?? 'unbounded')
  return [
    {
      title: 'End to end: accept p99 by offered rate',
      kind: 'line',
      xLabel: 'offered sends/s',
      yLabel: 'ms',
      x,
      series: [
        { name: 'accept p99', values: points.map((p) => p.load.latency.p99) },
        { name: 'accept p50', values: points.map((p) => p.load.latency.p50) }
      ]
    },
    {
      title: 'End to end: delivered/s by offered rate',
      kind: 'line',
      xLabel: 'offered sends/s',
      yLabel: 'messages/s',
      x,
      series: [
        { name: 'delivered/s', values: points.map((p) => p.deliveredPerS) },
        { name: 'accepted/s', values: points.map((p) => p.load.acceptedPerS) }
      ]
    },
    {
      title: 'End to end: CPU µs per delivered message by process',
      kind: 'bar',
      xLabel: 'process',
      yLabel: 'µs / message',
      x: ROLES.map((r) => r.replace('_', ' ')),
      series: [{ name: `${f.senders} senders, unbounded`, values: ROLES.map((r) => usPerMsg(f.main, r)) }]
    }
  ]
}

export function e2eReport (f: E2eFigures): BenchResult {
  const m = f.main
  const b = f.books
  const scraped = f.scrape !== undefined ? `; GET /metrics every ${f.scrape.everyMs} ms, ${fmt(scrapeTotal(f.scrape))} scrapes` : ''
  const summary = `${fmt(m.load.acceptedPerS)} accepted/s at ${f.senders} senders ` +
    `(p50 ${m.load.latency.p50} ms, p99 ${m.load.latency.p99} ms) while delivering ${fmt(m.deliveredPerS)}/s ` +
    `with ${fmt(m.webhooksPerS)} signed webhooks/s, ${(m.deliveredPerS / Math.max(1, f.plain.perS)).toFixed(2)}× ` +
    `a plain nodemailer pool (${fmt(f.plain.perS)}/s); send → sink p99 ${m.books.sendToSinkMs.p99} ms; ` +
    `${msPerMsg(m).toFixed(2)} ms CPU per message, all processes; ` +
    `${fmt(b.accepted)} accepted in all, ${b.lost} lost, ${b.duplicated} duplicated${scraped}`
  return {
    name: 'e2e',
    title: `End to end: HTTP sends while delivering to SMTP and posting signed webhooks, vs a plain nodemailer pool${scrapeLabel(f)}`,
    quick: f.quick,
    passed: f.failures.length === 0,
    summary,
    failures: f.failures,
    duration_s: Math.round((Date.now() - f.started) / 100) / 10,
    tables: [
      headline(f),
      cpuTable(m),
      curveTable(f),
      ...(f.scrape !== undefined ? [scrapeTable(f.scrape)] : []),
      {
        title: 'Every phase together (warm-up, unbounded run, curve): each accepted message exactly once at the sink, ' +
          'with exactly one `delivered` webhook',
        columns: [
          'accepted', 'lost', 'duplicated (extra copies)', 'at the sink without a 202 seen', 'without a webhook', 'more than one webhook'
        ],
        rows: [[fmt(b.accepted), b.lost, `${b.duplicated} (${b.extraCopies})`, b.unacknowledged, b.webhookMissing, b.webhookDuplicated]]
      }
    ],
    charts: charts(f),
    notes: [
      ...targetLines(f),
      'Outbox runs as `node dist/cli/main.js start` (gateway, engine and inbound in one process) on a nats-server and a ' +
        'redis-server the bench starts on free ports; the SMTP sink (smtp-server) and the HTTPS webhook receiver (checks every ' +
        'signature) run in processes of their own, the senders in the bench process. All of them share the machine\'s cores.',
      'The plain pool runs first, alone, to the same sink: the ratio compares like with like on the same machine in the same run. ' +
        'Outbox signs every message with DKIM, rewrites links and adds the open pixel; the plain pool does none of that.',
      'Latency is from a request\'s send to its answer (curve points: a sender that falls behind its schedule sends at once, so a ' +
        'saturated point shows its backlog in the rate, not in the latency). Send → sink latency uses the send time the sender ' +
        'wrote into an X-Bench-Sent header.',
      'The run fails only when accepted mail is lost or duplicated, a delivered message never gets its `delivered` webhook, or ' +
        '(with `--scrape-ms`) a scrape of /metrics fails; a repeated webhook is reported only (webhooks are at least once). ' +
        `The load average when the bench started: ${f.loadStart.toFixed(2)}.`
    ]
  }
}
