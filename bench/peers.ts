import { loadavg } from 'node:os'
import { RemoteSink } from './engine.ts'
import { processCpuUs } from './proc_cpu.ts'
import { TreeSampler } from './peers_cpu.ts'
import { ensurePostfix, startPostfix, type PostfixInstance } from './peers_postfix.ts'
import { startOutboxSystem, type OutboxSystem } from './peers_outbox.ts'
import { httpLoad, smtpLoad, type LoadControl, type LoadResult } from './peers_load.ts'
import { peerBooks, type PeerBooks } from './peers_books.ts'
import { peersReport, type KillPhase, type Throughput } from './peers_report.ts'
import type { BenchOptions, BenchResult } from './types.ts'

/**
 * Outbox next to Postfix + OpenDKIM on the same machine, to the same SMTP sink, one system at a time: the same N
 * messages (5 KB HTML, one recipient) from 16 senders to (a) a private Postfix instance with OpenDKIM by SMTP,
 * (b) Outbox by SMTP submission (STARTTLS + AUTH), (c) Outbox by its HTTP API. Then a kill phase per system: under
 * load, at a random moment, SIGKILL to every process of the system, a restart, and the books of what was accepted.
 * Speed targets are reported, never failed; a throughput phase that loses or duplicates accepted mail fails.
 */
export const SENDERS = 16
const STALL_MS = 30_000
/** After a kill the engine's unacknowledged messages come back after the consumer's ack wait (60 s by default). */
const KILL_STALL_MS = 90_000

const loadAverage = (): string => loadavg().map((l) => l.toFixed(2)).join(' ')
const positive = (v: string | undefined, fallback: number): number =>
  v !== undefined && Number.isInteger(Number(v)) && Number(v) > 0 ? Number(v) : fallback

/** Waits until the sink counts `target` messages, or nothing arrived for `stallMs`. */
async function untilCount (sink: RemoteSink, target: number, stallMs: number): Promise<void> {
  let last = -1
  let movedAt = Date.now()
  for (;;) {
    const n = await sink.accepted()
    if (n >= target) return
    if (n !== last) { last = n; movedAt = Date.now() }
    if (Date.now() - movedAt > stallMs) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Waits until every accepted message is at the sink (by Message-ID), or nothing new arrived for `stallMs`. */
async function untilBooksClose (
  sink: RemoteSink, load: LoadResult, domain: string, belongs: (mid: string) => boolean, stallMs: number
): Promise<PeerBooks> {
  let lost = -1
  let arrived = -1
  let movedAt = Date.now()
  for (;;) {
    const arrivals = await sink.arrivals()
    const books = peerBooks(load.accepted, arrivals, domain, belongs)
    if (books.lost === 0) return books
    if (books.lost !== lost || arrivals.length !== arrived) { lost = books.lost; arrived = arrivals.length; movedAt = Date.now() }
    if (Date.now() - movedAt > stallMs) return books
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

type Cpu = () => Record<string, number>

/** CPU µs by process over a window: Postfix's tree by process name plus opendkim; Outbox by role. */
function postfixCpu (pf: PostfixInstance): Cpu {
  const tree = new TreeSampler(pf.masterPid()!)
  const dkim = pf.opendkimPid()
  const dkim0 = processCpuUs(dkim)
  return () => {
    const t = tree.stop()
    const out: Record<string, number> = Object.fromEntries(t.byName)
    if (t.unsampledUs > 0) out['(exited between samples)'] = t.unsampledUs
    out.opendkim = processCpuUs(dkim) - dkim0
    return out
  }
}

function rolesCpu (pids: Record<string, number | undefined>): Cpu {
  const before = Object.fromEntries(Object.entries(pids).map(([r, p]) => [r, processCpuUs(p)]))
  return () => Object.fromEntries(Object.entries(pids).map(([r, p]) => [r, Math.max(0, processCpuUs(p) - before[r]!)]))
}

async function throughput (
  system: string, sink: RemoteSink, domain: string, cpu: () => Cpu,
  send: (c: LoadControl, n: number, tag: string) => Promise<LoadResult>, progress: (f: number, label: string) => void, count: number
): Promise<Throughput> {
  // A warm-up through the same path, not measured: JIT compiled, Postfix's processes forked, the sink's too.
  progress(0, `${system}: warm-up`)
  const warm0 = await sink.accepted()
  const warm = await send({ stop: false }, Math.min(1000, Math.max(50, Math.floor(count / 10))), 'warm')
  await untilCount(sink, warm0 + warm.accepted.length, STALL_MS)
  const la0 = loadAverage()
  const sink0 = await sink.accepted()
  const window = cpu()
  const around = rolesCpu({ sink: sink.pid, load_generator: process.pid })
  // The sink answers one question at a time (its answers carry no tag): progress comes from the senders' own count.
  const load = await send({ stop: false, onAccepted: (n) => { if (n % 50 === 0) progress(0.9 * n / count, system) } }, count, 'run')
  progress(0.9, `${system}: waiting for the sink`)
  await untilCount(sink, sink0 + load.accepted.length, STALL_MS)
  const cpuUs = window()
  const aroundUs = around()
  const ids = new Set(load.accepted.map((a) => a.messageId))
  const books = peerBooks(load.accepted, await sink.arrivals(), domain, (mid) => ids.has(mid))
  return { system, load, books, cpuUs, aroundUs, loadAverage: { start: la0, end: loadAverage() } }
}

async function killPhase (
  system: string, sink: RemoteSink, domain: string, count: number, send: (c: LoadControl) => Promise<LoadResult>,
  kill: () => Promise<void>, restart: () => Promise<void>, belongs: (mid: string) => boolean, queued?: () => number
): Promise<KillPhase> {
  const killAt = Math.max(1, Math.floor(count * (0.2 + 0.6 * Math.random())))
  let killing: Promise<void> | undefined
  let killedAt = 0
  const control: LoadControl = {
    stop: false,
    onAccepted: (n) => {
      if (n < killAt || killing !== undefined) return
      control.stop = true
      killedAt = Date.now()
      killing = kill()
    }
  }
  const load = await send(control)
  if (killing === undefined) { killedAt = Date.now(); killing = kill() }
  await killing
  const restartAt = Date.now()
  await restart()
  const restartS = (Date.now() - restartAt) / 1000
  const books = await untilBooksClose(sink, load, domain, belongs, KILL_STALL_MS)
  return {
    system, killAt, killedAfterS: (killedAt - load.startedAt) / 1000, load, books, restartS,
    ...(queued !== undefined ? { stillQueued: queued() } : {})
  }
}

export async function runPeersBench (opts: BenchOptions): Promise<BenchResult> {
  const started = Date.now()
  const messages = positive(opts.args.messages, 20_000)
  const killMessages = positive(opts.args['kill-messages'], Math.min(messages, 5000))
  const say = (line: string): void => { process.stderr.write(line + '\n') }
  opts.progress(0, 'Postfix and OpenDKIM packages')
  const skipped = await ensurePostfix(say)
  if (skipped !== undefined) return peersReport({ quick: opts.quick, started, messages, killMessages, skipped, failures: [] })
  const domain = `peers-${Date.now().toString(36)}.bench.test`
  const tag = Date.now().toString(36)
  const sink = await RemoteSink.start({ record: true })
  let pf: PostfixInstance | undefined
  let ob: OutboxSystem | undefined
  try {
    const step = (k: number) => (f: number, label: string) => { opts.progress((k + f) / 6, label) }
    opts.progress(0.01, 'starting a private Postfix with OpenDKIM')
    pf = await startPostfix({ domain, sinkPort: sink.port })
    const p = pf
    const smtpPostfix = (t: string) => async (c: LoadControl, n: number) =>
      await smtpLoad({ port: p.port, from: `orders@${domain}`, tag: t, domain }, n, SENDERS, c)
    const postfix = await throughput('Postfix + OpenDKIM, SMTP', sink, domain, () => postfixCpu(p),
      async (c, n, t) => await smtpPostfix(`pf-${t}-${tag}`)(c, n), step(0), messages)
    const postfixKill = await killPhase('Postfix + OpenDKIM, SMTP', sink, domain, killMessages,
      async (c) => await smtpPostfix(`pfk-${tag}`)(c, killMessages), p.kill, p.start,
      (mid) => mid.startsWith(`<peers.pfk-${tag}.`), p.queued)
    const postfixLog = postfix.books.lost > 0 ? p.logTail() : ''
    await p.close()
    pf = undefined
    step(2)(0, 'starting Outbox')
    ob = await startOutboxSystem({ sinkUrl: sink.url, domain })
    const o = ob
    const smtpOutbox = (t: string) => async (c: LoadControl, n: number) => await smtpLoad({
      port: o.submissionPort, auth: { user: 'apikey', pass: o.key }, from: `orders@${domain}`, tag: t, domain
    }, n, SENDERS, c)
    const http = async (c: LoadControl, n: number): Promise<LoadResult> =>
      await httpLoad({ baseUrl: o.baseUrl, key: o.key, from: `orders@${domain}`, domain }, n, SENDERS, c)
    const outboxCpu = (): Cpu => rolesCpu(o.pids())
    const outboxSmtp = await throughput('Outbox, SMTP submission', sink, domain, outboxCpu,
      async (c, n, t) => await smtpOutbox(`ob-${t}-${tag}`)(c, n), step(2), messages)
    const outboxHttp = await throughput('Outbox, HTTP API', sink, domain, outboxCpu,
      async (c, n) => await http(c, n), step(3), messages)
    step(4)(0, 'kill -9 Outbox under SMTP submission')
    const outboxSmtpKill = await killPhase('Outbox, SMTP submission', sink, domain, killMessages,
      async (c) => await smtpOutbox(`obk-${tag}`)(c, killMessages), o.kill, o.restart, (mid) => mid.startsWith(`<peers.obk-${tag}.`))
    step(5)(0, 'kill -9 Outbox under HTTP sends')
    // Everything at the sink so far (warm-up and measured HTTP sends among it) is not of this phase.
    const before = new Set((await sink.arrivals()).map(([mid]) => mid))
    const outboxHttpKill = await killPhase('Outbox, HTTP API', sink, domain, killMessages,
      async (c) => await http(c, killMessages), o.kill, o.restart, (mid) => mid.startsWith('<msg_') && !before.has(mid))
    const failures: string[] = []
    for (const t of [postfix, outboxSmtp, outboxHttp]) {
      const refused = [...t.load.refused].map(([k, v]) => `${k}: ${v}`).join(', ')
      if (t.books.accepted === 0) failures.push(`${t.system}: nothing accepted (${refused})`)
      if (t.books.lost > 0 || t.books.duplicated > 0) {
        failures.push(`${t.system}: ${t.books.lost} of ${t.books.accepted} accepted lost, ${t.books.duplicated} duplicated ` +
          '(no kill in this phase)')
      }
    }
    if (postfixLog !== '') failures.push(`Postfix's log ended: ${postfixLog}`)
    return peersReport({
      quick: opts.quick, started, messages, killMessages, failures,
      throughput: [postfix, outboxSmtp, outboxHttp], kills: [postfixKill, outboxSmtpKill, outboxHttpKill]
    })
  } finally {
    await pf?.close()
    await ob?.close()
    await sink.close()
  }
}
