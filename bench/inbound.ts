import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { SMTPServer } from 'smtp-server'
import autocannon from 'autocannon'
import uWS from 'uWebSockets.js'
import { jetstream, DeliverPolicy } from '@nats-io/jetstream'
import { TestOutbox } from '../test/helpers/outbox.ts'
import { DnsServer } from '../test/helpers/dns_server.ts'
import { addRoute } from '../test/helpers/inbound.ts'
import { putWebhook, setWebhookStatus } from '../test/helpers/webhooks.ts'
import { eventually } from '../test/helpers/waiting.ts'
import { testCa } from '../test/helpers/https_receiver.ts'
import { STREAM_EVENTS, eventSubject, installationSecret, signToken, newId } from '../protocol/mod.ts'
import { PIXEL_GIF } from '../gateway/routes/tracking.ts'
import { cpuSnapshot } from './proc_cpu.ts'

/**
 * Inbound and tracking throughput, each next to a bare baseline measured in the same run:
 * - inbound: messages/s from a pooled nodemailer client until each message's signed `inbound.received` webhook
 *   reached a local HTTPS receiver (stored, parsed, SPF/DKIM/DMARC checked, scored, published, fanned out,
 *   signed, posted), against a bare smtp-server whose onData only drains the stream. For reference, the same
 *   with the webhook paused, until the event is on OB_EVENTS: the difference is what the webhook leg costs.
 * - tracking: requests/s (autocannon) on the open pixel and the click redirect, each publishing its event with a
 *   PubAck before answering, against a bare uWebSockets.js server answering the same bytes.
 */
export interface InboundBenchOptions {
  quick?: boolean
  messages?: number
  durationS?: number
  connections?: number
  rounds?: number
  /** skip the HTTP part (profiling) */
  inboundOnly?: boolean
}

export interface Row {
  name: string
  outbox: number
  baseline: number
  unit: string
  ratio: number
  /** Inbound rows: CPU per message, µs (Outbox: its process, NATS and Redis; bare: its process), sender included. */
  outbox_cpu_us?: number
  baseline_cpu_us?: number
}

interface Round { perS: number, cpuUs: number }

const ROUNDS = 3
const WARMUP_MESSAGES = 1000
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const medianRound = (rs: Round[]): Round => ({ perS: median(rs.map((r) => r.perS)), cpuUs: median(rs.map((r) => r.cpuUs)) })
const now = (): number => performance.timeOrigin + performance.now()

/**
 * Runs the pooled sender on a worker thread (bench/inbound_sender.ts) and resolves once it sent everything, with
 * the wall-clock time its first message started: the thread's start-up is not part of any figure.
 */
async function sendAll (port: number, count: number, to: string): Promise<{ startedAt: number }> {
  const w = new Worker(new URL('./inbound_sender.js', import.meta.url), { workerData: { port, count, to } })
  return await new Promise((resolve, reject) => {
    w.once('message', (m: { startedAt: number }) => resolve(m))
    w.once('error', reject)
    w.once('exit', (code) => { if (code !== 0) reject(new Error(`sender exited with ${code}`)) })
  })
}

/**
 * One round: messages/s from the sender's first message until `done` resolves, and the CPU per message of this
 * process (all its threads: server, sender, receiver) plus `others` (NATS and Redis).
 */
async function measured (
  count: number, others: ReadonlyArray<number | undefined>, send: () => Promise<{ startedAt: number }>, done: () => Promise<void>
): Promise<Round> {
  const cpu = process.cpuUsage()
  const otherCpu = cpuSnapshot(others)
  const { startedAt } = await send()
  await done()
  const s = (now() - startedAt) / 1000
  const c = process.cpuUsage(cpu)
  return { perS: count / s, cpuUs: (c.user + c.system + otherCpu()) / count }
}

async function bareSmtp (count: number): Promise<Round> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    onData (stream, _s, cb) { stream.on('end', () => cb()); stream.resume() }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as { port: number }).port
  const r = await measured(count, [], async () => await sendAll(port, count, 'someone@bare.test'), async () => {})
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return r
}

/** The HTTPS receiver (bench/inbound_webhook_sink.ts) on its own thread, like a customer's endpoint would be. */
class WebhookSink {
  private constructor (private readonly worker: Worker, readonly port: number) {}
  static async start (): Promise<WebhookSink> {
    const ca = testCa()
    const worker = new Worker(new URL('./inbound_webhook_sink.js', import.meta.url), { workerData: { key: ca.key, cert: ca.cert } })
    const [m] = await once(worker, 'message') as [{ port: number }]
    return new WebhookSink(worker, m.port)
  }

  /** Resolves once `count` distinct messages' webhooks, signed with `secret`, have arrived; fails after `timeoutMs`. */
  async arm (count: number, secret: string, timeoutMs = 300_000): Promise<{ received: number, bad: number }> {
    const ac = new AbortController()
    const timer = setTimeout(() => { ac.abort(new Error(`not all ${count} webhooks arrived within ${timeoutMs} ms`)) }, timeoutMs)
    const done = once(this.worker, 'message', { signal: ac.signal }) as Promise<[{ received: number, bad: number }]>
    this.worker.postMessage({ expect: count, secret })
    try {
      return (await done)[0]
    } finally {
      clearTimeout(timer)
    }
  }

  async close (): Promise<void> { this.worker.postMessage({ close: true }); await once(this.worker, 'exit') }
}

/** Until every message's signed `inbound.received` webhook reached the receiver. */
async function outboxToWebhook (ob: TestOutbox, sink: WebhookSink, secret: string, domain: string, count: number): Promise<Round> {
  const all = sink.arm(count, secret)
  all.catch(() => {}) // awaited below; a failed send must not leave it unhandled
  const send = async (): Promise<{ startedAt: number }> => await sendAll(ob.proc.inbound!.port, count, `support@${domain}`)
  return await measured(count, [ob.nats.pid, ob.redisServer.pid], send, async () => {
    const { bad } = await all
    if (bad > 0) throw new Error(`${bad} webhook requests with a bad signature or payload`)
  })
}

/** Until every message's `inbound.received` event is on OB_EVENTS (run with the webhook paused). */
async function outboxToEvents (ob: TestOutbox, orgId: string, domain: string, count: number): Promise<Round> {
  // Only events published from now on: earlier rounds' events must not count.
  const consumer = await jetstream(ob.proc.nc).consumers.get(STREAM_EVENTS, {
    filter_subjects: eventSubject(orgId, 'inbound.received'), deliver_policy: DeliverPolicy.New
  })
  const messages = await consumer.consume()
  let seen = 0
  let done!: () => void
  const all = new Promise<void>((resolve) => { done = resolve })
  void (async () => { for await (const _m of messages) if (++seen >= count) done() })()
  const send = async (): Promise<{ startedAt: number }> => await sendAll(ob.proc.inbound!.port, count, `support@${domain}`)
  const r = await measured(count, [ob.nats.pid, ob.redisServer.pid], send, async () => { await all })
  await messages.close()
  return r
}

async function cannon (url: string, durationS: number, connections: number): Promise<number> {
  const r = await autocannon({ url, duration: durationS, connections, headers: { 'user-agent': 'bench' } })
  if (r.non2xx > 0 && !url.includes('/t/c/')) throw new Error(`${r.non2xx} non-2xx answers from ${url}`)
  return r.requests.average
}

async function bareUws (): Promise<{ port: number, close: () => void }> {
  const app = uWS.App()
  app.get('/t/o/:token', (res) => {
    res.cork(() => {
      res.writeStatus('200 OK').writeHeader('Content-Type', 'image/gif').writeHeader('Cache-Control', 'no-store').end(PIXEL_GIF)
    })
  })
  app.get('/t/c/:token', (res) => { res.cork(() => { res.writeStatus('302 Found').writeHeader('Location', 'https://example.org/landing').endWithoutBody(0) }) })
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) =>
    app.listen('127.0.0.1', 0, (s) => s === false ? reject(new Error('listen')) : resolve(s)))
  return { port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) }
}

function markdownOf (rows: Row[]): string {
  return [
    '| measurement | Outbox | bare baseline | unit | Outbox / baseline |',
    '|---|---:|---:|---|---:|',
    ...rows.map((r) => `| ${r.name} | ${r.outbox.toFixed(0)} | ${r.baseline.toFixed(0)} | ${r.unit} | ${(r.ratio * 100).toFixed(0)} % |`),
    '',
    '| inbound, CPU per message (µs; whole process + NATS + Redis for Outbox) | Outbox | bare smtp-server |',
    '|---|---:|---:|',
    ...rows.filter((r) => r.outbox_cpu_us !== undefined).map((r) => `| ${r.name} | ${r.outbox_cpu_us} | ${r.baseline_cpu_us} |`)
  ].join('\n')
}

export async function runInboundBench (opts: InboundBenchOptions = {}): Promise<{ rows: Row[], markdown: string }> {
  const messages = opts.messages ?? (opts.quick === true ? 200 : 1000)
  const durationS = opts.durationS ?? (opts.quick === true ? 3 : 10)
  const connections = opts.connections ?? 20
  const dns = await DnsServer.start({})
  const sink = await WebhookSink.start()
  const ob = await TestOutbox.start({
    env: {
      OB_DNS_SERVERS: dns.address,
      OB_LOG_LEVEL: 'silent',
      OB_WEBHOOK_CA_FILE: testCa().caFile,
      OB_WEBHOOK_ALLOW_PRIVATE: 'true',
      // The tracking rows come from one address: the per-address meter still runs on every request (its cost is
      // part of the figure) but at its highest rate, so it refuses none of them.
      OB_TRACKING_RATE_LIMIT: '1000000',
      // Every round's mail comes from one client address to one route: the quotas that stop a stranger's flood
      // (docs/inbound.md#quotas) are off, as an operator sets them for a known relay.
      OB_INBOUND_SENDER_MAX_MESSAGES: '0',
      OB_INBOUND_SENDER_MAX_BYTES: '0',
      OB_INBOUND_ROUTE_MAX_MESSAGES: '0',
      OB_INBOUND_ROUTE_MAX_BYTES: '0'
    }
  })
  const uws = await bareUws()
  const rows: Row[] = []
  try {
    const org = await ob.org()
    await addRoute(ob, org, `*@${org.domain}`, false)
    const hook = await putWebhook(ob, org, { url: `https://127.0.0.1:${sink.port}/inbound`, events: ['inbound.received'] })
    // Warm-up, for both sides alike: the figures are for code the JIT has optimised, as in a server that has been
    // up for a while (the first few hundred messages run far slower), plus the webhook connections.
    const warmup = Math.min(WARMUP_MESSAGES, messages)
    await outboxToWebhook(ob, sink, hook.secret, org.domain, warmup)
    await bareSmtp(warmup)
    // Alternating rounds, median of each: the machine is shared, and load drifts within a run.
    const bare: Round[] = []
    const toWebhook: Round[] = []
    const rounds = opts.rounds ?? ROUNDS
    for (let round = 0; round < rounds; round++) {
      bare.push(await bareSmtp(messages))
      toWebhook.push(await outboxToWebhook(ob, sink, hook.secret, org.domain, messages))
    }
    // The same without the webhook leg: paused webhooks get nothing (the fan-out reads the status per event).
    await setWebhookStatus(ob, hook, 'paused')
    await eventually(() => ob.proc.cp.webhooks.get(`${org.orgId}.${hook.id}`)?.status === 'paused', 'webhook paused')
    const toEvents: Round[] = []
    for (let round = 0; round < rounds; round++) {
      bare.push(await bareSmtp(messages))
      toEvents.push(await outboxToEvents(ob, org.orgId, org.domain, messages))
    }
    const b = medianRound(bare)
    const inboundRuns = [
      ['inbound SMTP → signed inbound.received webhook received', toWebhook],
      ['inbound SMTP → inbound.received on OB_EVENTS (webhook paused)', toEvents]
    ] as const
    for (const [name, rs] of inboundRuns) {
      const o = medianRound(rs)
      rows.push({
        name,
        outbox: o.perS,
        baseline: b.perS,
        unit: 'msg/s',
        ratio: o.perS / b.perS,
        outbox_cpu_us: Math.round(o.cpuUs),
        baseline_cpu_us: Math.round(b.cpuUs)
      })
    }

    if (opts.inboundOnly === true) return { rows, markdown: markdownOf(rows) }
    const secret = await installationSecret(ob.proc.cp.settings, ob.proc.config.secret)
    const claims = { o: org.orgId, m: newId('msg'), r: 'reader@remote.test' }
    const open = signToken(secret, { k: 'o', ...claims })
    const click = signToken(secret, { k: 'c', ...claims, u: 'https://example.org/landing' })
    const bareBase = `http://127.0.0.1:${uws.port}`
    const trackingPaths = [['open pixel GET /t/o/{token}', `/t/o/${open}`], ['click redirect GET /t/c/{token}', `/t/c/${click}`]] as const
    for (const [name, path] of trackingPaths) {
      const base = await cannon(bareBase + path, durationS, connections)
      const o = await cannon(ob.baseUrl + path, durationS, connections)
      rows.push({ name, outbox: o, baseline: base, unit: 'req/s', ratio: o / base })
    }
  } finally {
    uws.close()
    await ob.close()
    await sink.close()
    await dns.close()
  }
  return { rows, markdown: markdownOf(rows) }
}

/** Standalone (`node dist/bench/inbound.js [--quick] [--inbound-only]`): prints only; `npm run bench -- inbound` records. */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick')
  const result = await runInboundBench({ quick, inboundOnly: process.argv.includes('--inbound-only') })
  console.log(JSON.stringify({ bench: 'inbound', quick, at: new Date().toISOString(), node: process.version, rows: result.rows }, null, 2))
  console.log(result.markdown)
  process.exit(0)
}
