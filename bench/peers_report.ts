import type { PeerBooks } from './peers_books.ts'
import type { LoadResult } from './peers_load.ts'
import type { BenchResult, Chart, Table } from './types.ts'

/** The side-by-side benchmark's figures as tables, a chart, target lines and the README summary. */
export interface Throughput {
  system: string
  load: LoadResult
  books: PeerBooks
  /** CPU µs over the phase (first send → every accepted message at the sink) by process of the system. */
  cpuUs: Record<string, number>
  /** The same for the sink and the load generator, which are not the system's. */
  aroundUs: Record<string, number>
  loadAverage: { start: string, end: string }
}

export interface KillPhase {
  system: string
  /** The kill came once this many messages were accepted (drawn at random in 20–80 % of the phase's messages). */
  killAt: number
  killedAfterS: number
  load: LoadResult
  books: PeerBooks
  restartS: number
  /** Postfix only: queue files left undelivered when the books closed. */
  stillQueued?: number
}

export interface PeersFigures {
  quick: boolean
  started: number
  messages: number
  killMessages: number
  failures: string[]
  skipped?: string
  throughput?: Throughput[]
  kills?: KillPhase[]
}

const TITLE = 'Outbox next to Postfix + OpenDKIM: delivered/s, CPU per message and kill -9, same machine, same sink'
/** Targets: reported as PASS or FAIL with their arithmetic, never failing the run. */
const TARGET = { smtp: 2, http: 3 }
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US')
const delivered = (t: Throughput): number => t.books.accepted - t.books.lost
export const deliveredPerS = (t: Throughput): number =>
  t.books.lastArrivalAt > t.load.firstAcceptAt ? delivered(t) / ((t.books.lastArrivalAt - t.load.firstAcceptAt) / 1000) : 0
const cpuTotal = (t: Throughput): number => Object.values(t.cpuUs).reduce((a, b) => a + b, 0)
const msPerMsg = (t: Throughput): number => cpuTotal(t) / Math.max(1, delivered(t)) / 1000
const refused = (l: LoadResult): string => l.refused.size === 0 ? '0' : [...l.refused].map(([k, v]) => `${k}: ${v}`).join(', ')

function headline (ts: Throughput[], senders: number): Table {
  return {
    title: `The same 5 KB HTML message, one recipient each, from ${senders} senders with a connection each, to the same SMTP sink`,
    columns: [
      'system', 'accepted', 'not accepted', 'delivered/s', 'submit p50 / p99 ms', 'CPU ms per delivered message (system)',
      'lost / duplicated', 'DKIM-signed by the test domain', 'load average start → end'
    ],
    rows: ts.map((t) => [
      t.system, fmt(t.books.accepted), refused(t.load), fmt(deliveredPerS(t)), `${t.load.latency.p50} / ${t.load.latency.p99}`,
      msPerMsg(t).toFixed(3), `${t.books.lost} / ${t.books.duplicated}`,
      `${fmt(t.books.signed)} of ${fmt(delivered(t))}${t.books.signedOther > 0 ? ` (${t.books.signedOther} by another domain)` : ''}`,
      `${t.loadAverage.start.split(' ')[0]} → ${t.loadAverage.end.split(' ')[0]}`
    ])
  }
}

function cpuTable (ts: Throughput[]): Table {
  const rows: Array<Array<string | number>> = []
  for (const t of ts) {
    const n = Math.max(1, delivered(t))
    const entries = Object.entries(t.cpuUs).sort((a, b) => b[1] - a[1])
    for (const [name, us] of entries) rows.push([t.system, name, (us / 1e6).toFixed(2), Math.round(us / n)])
    rows.push([t.system, 'all of the system', (cpuTotal(t) / 1e6).toFixed(2), Math.round(cpuTotal(t) / n)])
    for (const [name, us] of Object.entries(t.aroundUs)) {
      rows.push([t.system, `(not the system) ${name.replace('_', ' ')}`, (us / 1e6).toFixed(2), Math.round(us / n)])
    }
  }
  return {
    title: 'CPU per delivered message by process (/proc/<pid>/stat), first send → every accepted message at the sink',
    columns: ['system', 'process', 'CPU s', 'µs per delivered message'],
    rows
  }
}

function killTable (ks: KillPhase[]): Table {
  return {
    title: 'kill -9 under load: every process of the system killed at once at a random moment, restarted, and the books',
    columns: [
      'system', 'killed after (accepted / s)', 'accepted', 'lost', 'duplicated (extra copies)', 'at the sink without an accept seen',
      'DKIM-signed', 'restart s', 'queue files left (half-received ones never answered 250 included)'
    ],
    rows: ks.map((k) => [
      k.system, `${fmt(k.killAt)} / ${k.killedAfterS.toFixed(1)}`, fmt(k.books.accepted), k.books.lost,
      `${k.books.duplicated} (${k.books.extraCopies})`, k.books.unacknowledged,
      `${fmt(k.books.signed)} of ${fmt(k.books.accepted - k.books.lost)}`, k.restartS.toFixed(1), k.stillQueued ?? ''
    ])
  }
}

function targetLines (ts: Throughput[], ks: KillPhase[]): string[] {
  const [pf, smtp, http] = ts.map(deliveredPerS) as [number, number, number]
  const line = (ok: boolean, what: string, arithmetic: string): string =>
    `${ok ? 'PASS' : 'FAIL'} ${what}: ${arithmetic} (target, reported only)`
  const ratio = (x: number): number => pf > 0 ? x / pf : 0
  const obKills = ks.filter((k) => k.system.startsWith('Outbox'))
  const lost = obKills.reduce((n, k) => n + k.books.lost, 0)
  return [
    line(ratio(smtp) >= TARGET.smtp, `Outbox ÷ Postfix delivered/s by SMTP ≥ ${TARGET.smtp}×`,
      `${fmt(smtp)} ÷ ${fmt(pf)} = ${ratio(smtp).toFixed(2)}`),
    line(ratio(http) >= TARGET.http, `Outbox ÷ Postfix delivered/s by HTTP ≥ ${TARGET.http}×`,
      `${fmt(http)} ÷ ${fmt(pf)} = ${ratio(http).toFixed(2)}`),
    line(lost === 0, 'kill -9 Outbox: 0 lost', `${obKills.map((k) => `${k.books.lost} of ${k.books.accepted} (${k.system})`).join(', ')}`)
  ]
}

const NOTES = [
  'One system at a time on the same cores, to the same sink (smtp-server in its own process, STARTTLS offered): the ratios are of one run.',
  'Postfix: Debian\'s postfix and opendkim packages, a private instance (`postfix -c <dir> start`, its own config, queue and ' +
    'data directories) with Debian\'s stock services, no chroot, relayhost = the sink, STARTTLS to it when offered ' +
    '(smtp_tls_security_level = may, as Outbox speaks to its relay), queue files fsynced as shipped; OpenDKIM as its milter ' +
    '(relaxed/relaxed, RSA-2048, the test domain), milter_default_action = tempfail. Applications submit to it on loopback ' +
    'without TLS or AUTH; Outbox\'s submission requires STARTTLS and AUTH: that difference favours Postfix.',
  'Outbox: `node dist/cli/main.js start` (every role in one process) on a nats-server and a redis-server of its own, DKIM as ' +
    'configured by default (the organisation\'s RSA-2048 key), no webhook; by HTTP with tracking off, so all three send the ' +
    'same bytes. Its CPU is the Outbox process, nats-server and redis-server; Postfix\'s is every process of the instance ' +
    '(sampled every 200 ms by name; time of processes that exited between samples comes from the master\'s reaped-children ' +
    'time) and opendkim.',
  'Each system first takes a warm-up of a tenth of the messages (50 to 1,000) through the same path, not measured. ' +
    'Delivered/s is delivered messages ÷ (first accept → last first arrival at the sink); submit latency is from a message\'s ' +
    'send to its 250 or 202. Lost and duplicated are counted by Message-ID at the sink.',
  'kill -9: Postfix = its master, every process it forked and opendkim; Outbox = the Outbox process and nats-server (its queue). ' +
    'Redis keeps running: it holds the read model and rate limits, not mail. Both come back on their own data, and the ' +
    'phase ends when every accepted message is at the sink or nothing arrived for 90 s (the engine\'s ack wait is 60 s). ' +
    'A process kill leaves written data in the page cache, so it tests what each system writes before it answers, not ' +
    'fsync: Postfix fsyncs each queue file before its 250; nats-server 2.9 syncs every two minutes (2.10+ with ' +
    '`sync_interval: always`, as `outbox start` configures its embedded server, fsyncs before the PubAck).'
]

export function peersReport (f: PeersFigures): BenchResult {
  const duration = Math.round((Date.now() - f.started) / 100) / 10
  const base = { name: 'peers', title: TITLE, quick: f.quick, charts: [] as Chart[], duration_s: duration }
  if (f.skipped !== undefined || f.throughput === undefined || f.kills === undefined) {
    return { ...base, passed: true, summary: `skipped: ${f.skipped ?? 'no figures'}`, tables: [], notes: [], failures: [] }
  }
  const ts = f.throughput
  const [pf, smtp, http] = ts as [Throughput, Throughput, Throughput]
  const r = (t: Throughput): string => (deliveredPerS(pf) > 0 ? deliveredPerS(t) / deliveredPerS(pf) : 0).toFixed(2)
  const killBooks = f.kills.map((k) =>
    `${k.system.replace(', ', ' ')} ${k.books.lost} lost / ${k.books.duplicated} duplicated of ${fmt(k.books.accepted)}`)
  const summary = `${fmt(f.messages)} messages: Postfix + OpenDKIM ${fmt(deliveredPerS(pf))} delivered/s ` +
    `(${msPerMsg(pf).toFixed(2)} ms CPU/message), ` +
    `Outbox by SMTP ${fmt(deliveredPerS(smtp))}/s (${r(smtp)}×, ${msPerMsg(smtp).toFixed(2)} ms), by HTTP ${fmt(deliveredPerS(http))}/s ` +
    `(${r(http)}×, ${msPerMsg(http).toFixed(2)} ms); kill -9: ${killBooks.join('; ')}`
  return {
    ...base,
    passed: f.failures.length === 0,
    summary,
    failures: f.failures,
    tables: [
      headline(ts, 16),
      {
        title: 'Outbox ÷ Postfix in this run',
        columns: ['path', 'delivered/s', 'CPU per delivered message'],
        rows: [smtp, http].map((t) => [t.system, r(t), (msPerMsg(t) / Math.max(1e-9, msPerMsg(pf))).toFixed(2)])
      },
      cpuTable(ts),
      killTable(f.kills)
    ],
    charts: [{
      title: 'Delivered/s, same messages, same sink',
      kind: 'bar',
      xLabel: 'system',
      yLabel: 'messages/s',
      x: ts.map((t) => t.system),
      series: [{ name: 'delivered/s', values: ts.map((t) => Math.round(deliveredPerS(t))) }]
    }],
    notes: [
      ...targetLines(ts, f.kills), ...NOTES,
      `Kill phases: ${fmt(f.killMessages)} messages offered each, the kill at a random accept count.`
    ]
  }
}
