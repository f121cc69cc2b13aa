import { mkdirSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { SMTPServer } from 'smtp-server'
import { Worker } from 'node:worker_threads'
import autocannon from 'autocannon'
import uWS from 'uWebSockets.js'
import { jetstream, DeliverPolicy } from '@nats-io/jetstream'
import { TestOutbox } from '../test/helpers/outbox.ts'
import { DnsServer } from '../test/helpers/dns_server.ts'
import { addRoute } from '../test/helpers/inbound.ts'
import { STREAM_EVENTS, eventSubject, installationSecret, signToken, newId } from '../engine/protocol/mod.ts'
import { PIXEL_GIF } from '../gateway/routes/tracking.ts'

/**
 * Inbound and tracking throughput, each next to a bare baseline measured in the same run:
 * - inbound: messages/s from a pooled nodemailer client until each message's `inbound.received` event is on
 *   OB_EVENTS (stored, parsed, SPF/DKIM/DMARC checked, scored, published), against a bare smtp-server whose
 *   onData only drains the stream. The webhook leg is not included: it is measured with the webhook sender.
 * - tracking: requests/s (autocannon) on the open pixel and the click redirect, each publishing its event with a
 *   PubAck before answering, against a bare uWebSockets.js server answering the same bytes.
 */
export interface InboundBenchOptions { quick?: boolean, messages?: number, durationS?: number, connections?: number, rounds?: number, /** skip the HTTP part (profiling) */ inboundOnly?: boolean }

export interface Row { name: string, outbox: number, baseline: number, unit: string, ratio: number }

const ROUNDS = 3
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
/** Runs the pooled sender on a worker thread (bench/inbound_sender.ts) and returns the elapsed milliseconds. */
async function sendAll (port: number, count: number, to: string): Promise<number> {
  const w = new Worker(new URL('./inbound_sender.js', import.meta.url), { workerData: { port, count, to } })
  return await new Promise<number>((resolve, reject) => {
    w.once('message', (ms: number) => resolve(ms))
    w.once('error', reject)
    w.once('exit', (code) => { if (code !== 0) reject(new Error(`sender exited with ${code}`)) })
  })
}

async function bareSmtp (count: number): Promise<number> {
  const server = new SMTPServer({ authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], logger: false, onData (stream, _s, cb) { stream.on('end', () => cb()); stream.resume() } })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as { port: number }).port
  const ms = await sendAll(port, count, 'someone@bare.test')
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return count / (ms / 1000)
}

async function outboxInbound (ob: TestOutbox, orgId: string, domain: string, count: number): Promise<number> {
  // Only events published from now on: earlier rounds' events must not count.
  const consumer = await jetstream(ob.proc.nc).consumers.get(STREAM_EVENTS, { filter_subjects: eventSubject(orgId, 'inbound.received'), deliver_policy: DeliverPolicy.New })
  const messages = await consumer.consume()
  let seen = 0
  let done!: () => void
  const all = new Promise<void>((resolve) => { done = resolve })
  void (async () => { for await (const _m of messages) if (++seen >= count) done() })()
  const start = performance.now()
  await sendAll(ob.proc.inbound!.port, count, `support@${domain}`)
  await all
  const ms = performance.now() - start
  await messages.close()
  return count / (ms / 1000)
}

async function cannon (url: string, durationS: number, connections: number): Promise<number> {
  const r = await autocannon({ url, duration: durationS, connections, headers: { 'user-agent': 'bench' } })
  if (r.non2xx > 0 && !url.includes('/t/c/')) throw new Error(`${r.non2xx} non-2xx answers from ${url}`)
  return r.requests.average
}

async function bareUws (): Promise<{ port: number, close: () => void }> {
  const app = uWS.App()
  app.get('/t/o/:token', (res) => { res.cork(() => { res.writeStatus('200 OK').writeHeader('Content-Type', 'image/gif').writeHeader('Cache-Control', 'no-store').end(PIXEL_GIF) }) })
  app.get('/t/c/:token', (res) => { res.cork(() => { res.writeStatus('302 Found').writeHeader('Location', 'https://example.org/landing').endWithoutBody(0) }) })
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => app.listen('127.0.0.1', 0, (s) => s === false ? reject(new Error('listen')) : resolve(s)))
  return { port: uWS.us_socket_local_port(socket), close: () => uWS.us_listen_socket_close(socket) }
}

export async function runInboundBench (opts: InboundBenchOptions = {}): Promise<{ rows: Row[], markdown: string }> {
  const messages = opts.messages ?? (opts.quick === true ? 200 : 1000)
  const durationS = opts.durationS ?? (opts.quick === true ? 3 : 10)
  const connections = opts.connections ?? 20
  const dns = await DnsServer.start({})
  const ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address, OB_LOG_LEVEL: 'silent' } })
  const bare = await bareUws()
  const rows: Row[] = []
  try {
    const org = await ob.org()
    await addRoute(ob, org, `*@${org.domain}`, false)
    // Warm-up: JIT, the consumer and the object store's first writes.
    await outboxInbound(ob, org.orgId, org.domain, 20)
    await bareSmtp(20)
    // Alternating rounds, median of each: the machine is shared, and load drifts within a run.
    const bases: number[] = []
    const inbounds: number[] = []
    for (let round = 0; round < (opts.rounds ?? ROUNDS); round++) {
      bases.push(await bareSmtp(messages))
      inbounds.push(await outboxInbound(ob, org.orgId, org.domain, messages))
    }
    const base = median(bases)
    const inbound = median(inbounds)
    rows.push({ name: 'inbound SMTP → inbound.received on OB_EVENTS', outbox: inbound, baseline: base, unit: 'msg/s', ratio: inbound / base })

    if (opts.inboundOnly === true) return { rows, markdown: '' }
    const secret = await installationSecret(ob.proc.cp.settings, ob.proc.config.secret)
    const claims = { o: org.orgId, m: newId('msg'), r: 'reader@remote.test' }
    const open = signToken(secret, { k: 'o', ...claims })
    const click = signToken(secret, { k: 'c', ...claims, u: 'https://example.org/landing' })
    const bareBase = `http://127.0.0.1:${bare.port}`
    for (const [name, path] of [['open pixel GET /t/o/{token}', `/t/o/${open}`], ['click redirect GET /t/c/{token}', `/t/c/${click}`]] as const) {
      const b = await cannon(bareBase + path, durationS, connections)
      const o = await cannon(ob.baseUrl + path, durationS, connections)
      rows.push({ name, outbox: o, baseline: b, unit: 'req/s', ratio: o / b })
    }
  } finally {
    bare.close()
    await ob.close()
    await dns.close()
  }
  const markdown = [
    '| measurement | Outbox | bare baseline | unit | Outbox / baseline |',
    '|---|---:|---:|---|---:|',
    ...rows.map((r) => `| ${r.name} | ${r.outbox.toFixed(0)} | ${r.baseline.toFixed(0)} | ${r.unit} | ${(r.ratio * 100).toFixed(0)} % |`)
  ].join('\n')
  return { rows, markdown }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick')
  const result = await runInboundBench({ quick, inboundOnly: process.argv.includes('--inbound-only') })
  const out = { bench: 'inbound', quick, at: new Date().toISOString(), node: process.version, rows: result.rows, markdown: result.markdown }
  const dir = fileURLToPath(new URL('../../bench/results/', import.meta.url))
  mkdirSync(dir, { recursive: true })
  writeFileSync(`${dir}inbound.json`, JSON.stringify(out, null, 2) + '\n')
  console.log(JSON.stringify(out.rows, null, 2))
  console.log(result.markdown)
  process.exit(0)
}
