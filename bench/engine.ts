import { writeFileSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import nodemailer from 'nodemailer'
import { pino } from 'pino'
import { loadConfig } from '../config/mod.ts'
import { startOutbox } from '../cli/outbox_process.ts'
import { createOrganization } from '../gateway/control/orgs.ts'
import { connectNats, ensureStreams } from '../stores/clients/mod.ts'
import { streamSettings } from '../protocol/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { fork, type ChildProcess } from 'node:child_process'
import { publishQueued, queuedMessage } from '../test/helpers/engine_env.ts'
import type { Arrival } from './sink_process.ts'

/**
 * Messages per second into a local smtp-server sink: JetStream → engine → SMTP, against a plain nodemailer
 * pooled loop (10 connections, DKIM-signed like the engine) sending the same 5 KB message to the same sink.
 * The sink runs in its own process; CPU and peak RSS are of this process (the sender being measured, engine
 * threads included). nats-server and redis-server are separate processes and not counted.
 *
 *   node dist/bench/engine.js [--quick] [--full]      (quick: 1k; default: 1k and 10k; full: adds 100k)
 */
export interface BenchRow {
  mode: 'plain_loop' | 'engine'
  messages: number
  seconds: number
  msgs_per_s: number
  cpu_us_per_msg: number
  peak_rss_mb: number
}
export interface BenchResult { at: string, cores: number, rows: BenchRow[], engine_vs_loop: Record<string, number> }

const PADDING = '<p>Thank you for your order. This paragraph pads the message to a realistic size for a transactional email.</p>'
const HTML = `<html><body><h1>Your receipt</h1>${PADDING.repeat(44)}</body></html>`

async function measure (mode: BenchRow['mode'], messages: number, run: () => Promise<void>): Promise<BenchRow> {
  let peak = process.memoryUsage().rss
  const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 50)
  const cpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  await run()
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9
  const cpu = process.cpuUsage(cpu0)
  clearInterval(sampler)
  return {
    mode,
    messages,
    seconds: Math.round(seconds * 100) / 100,
    msgs_per_s: Math.round(messages / seconds),
    cpu_us_per_msg: Math.round((cpu.user + cpu.system) / messages),
    peak_rss_mb: Math.round(Math.max(peak, process.memoryUsage().rss) / 1048576)
  }
}

/** The sink in its own process (bench/sink_process.ts). */
export class RemoteSink {
  private constructor (private readonly child: ChildProcess, readonly port: number) {}

  /** `record`: keep every message's Message-ID, arrival time and X-Bench-Sent header for `arrivals()`. */
  static async start (opts: { record?: boolean } = {}): Promise<RemoteSink> {
    const file = fileURLToPath(new URL('./sink_process.js', import.meta.url))
    const child = fork(file, opts.record === true ? ['--record'] : [], { stdio: 'inherit' })
    const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve((m as { port: number }).port)))
    return new RemoteSink(child, port)
  }

  get url (): string { return `smtp://127.0.0.1:${this.port}` }

  get pid (): number | undefined { return this.child.pid }

  async accepted (): Promise<number> {
    return await new Promise((resolve) => {
      this.child.once('message', (m) => resolve((m as { accepted: number }).accepted))
      this.child.send('count')
    })
  }

  /** Every message recorded so far (a sink started with `record`), in arrival order. */
  async arrivals (): Promise<Arrival[]> {
    return await new Promise((resolve) => {
      this.child.once('message', (m) => resolve((m as { arrivals: Arrival[] }).arrivals))
      this.child.send('arrivals')
    })
  }

  async until (n: number): Promise<void> {
    while (await this.accepted() < n) await new Promise((resolve) => setTimeout(resolve, 20))
  }

  async close (): Promise<void> {
    await new Promise<void>((resolve) => { this.child.once('exit', () => resolve()); this.child.send('close') })
  }
}

/** What the plain pool sends: the engine bench signs with the domain's DKIM key, the end-to-end bench does not. */
export interface PlainMessage { from: string, html: string, dkim?: { domainName: string, keySelector: string, privateKey: string } }

/** A plain nodemailer pool (10 connections, 100 messages in flight) sending `n` messages to the sink: no durability. */
export async function plainLoop (sink: RemoteSink, message: PlainMessage, n: number): Promise<void> {
  const transport = nodemailer.createTransport({
    pool: true, maxConnections: 10, maxMessages: 100, host: '127.0.0.1', port: sink.port, tls: { rejectUnauthorized: false }
  })
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++
      await transport.sendMail({
        from: message.from,
        to: `loop${i}@dest.example`,
        subject: 'Your receipt',
        html: message.html,
        text: 'Thank you for your order.',
        ...(message.dkim !== undefined ? { dkim: message.dkim } : {})
      })
    }
  }
  await Promise.all(Array.from({ length: 100 }, worker))
  transport.close()
}

/** `extraEnv` (e.g. OB_ENGINE_SHARDS) is applied to the engine's settings: the scaling curve varies it. */
export async function engineRun (
  sink: RemoteSink, nats: ServerProcess, redis: ServerProcess, n: number, extraEnv: Record<string, string> = {}
): Promise<BenchRow> {
  const env = {
    NATS_URL: nats.url,
    REDIS_URL: redis.url,
    OB_SMTP_RELAY: sink.url,
    OB_ROLE: 'engine',
    OB_HTTP_PORT: '0',
    OB_METRICS_PORT: '0',
    OB_LOG_LEVEL: 'silent',
    ...extraEnv
  }
  const config = loadConfig(env)
  const nc = await connectNats(config.nats.servers, 'bench')
  await ensureStreams(nc, streamSettings(config))
  const cp = await ControlPlane.open(nc, { replicas: 1 })
  const domain = `bench${n}.example`
  const created = await createOrganization(cp, config, { name: domain, domain, plan: 'enterprise' })
  const org = { orgId: created.organization_id, domainId: created.domain_id, domain, adminKey: created.api_key }
  const batch: Array<Promise<void>> = []
  for (let i = 0; i < n; i++) {
    const message = queuedMessage(org, {
      to: [`eng${i}@dest.example`],
      subject: 'Your receipt',
      html: HTML,
      text: 'Thank you for your order.',
      track_opens: false,
      track_clicks: false
    })
    batch.push(publishQueued(nc, config, message))
    if (batch.length >= 500) await Promise.all(batch.splice(0))
  }
  await Promise.all(batch)
  cp.close()
  await nc.drain()
  const start = await sink.accepted()
  let stop: (() => Promise<void>) | undefined
  const row = await measure('engine', n, async () => {
    const proc = await startOutbox(config, pino({ level: 'silent' }))
    stop = proc.stop
    await sink.until(start + n)
  })
  await stop?.()
  return row
}

export interface EngineBenchOptions {
  quick?: boolean
  full?: boolean
  sizes?: number[]
  progress?: (fraction: number, label: string) => void
}

export async function runEngineBench (opts: EngineBenchOptions = {}): Promise<BenchResult> {
  const sizes = opts.sizes ?? (opts.quick === true ? [1000] : opts.full === true ? [1000, 10_000, 100_000] : [1000, 10_000])
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis()
  const sink = await RemoteSink.start()
  const rows: BenchRow[] = []
  const ratio: Record<string, number> = {}
  try {
    // a domain record with a real key for the loop's DKIM signatures
    const config = loadConfig({ NATS_URL: nats.url, REDIS_URL: redis.url })
    const nc = await connectNats(config.nats.servers, 'bench-setup')
    await ensureStreams(nc, streamSettings(config))
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const made = await createOrganization(cp, config, { name: 'loop', domain: 'loop.example', plan: 'enterprise' })
    const domain = cp.domain(made.organization_id, made.domain_id)!
    cp.close()
    await nc.drain()
    for (const [i, n] of sizes.entries()) {
      opts.progress?.(i / sizes.length, `${n} messages: plain loop, then engine`)
      const dkim = { domainName: domain.name, keySelector: domain.dkim_selector, privateKey: domain.dkim_private_key }
      const loop = await measure('plain_loop', n, async () => {
        await plainLoop(sink, { from: `sender@${domain.name}`, html: HTML, dkim }, n)
      })
      const engine = await engineRun(sink, nats, redis, n)
      rows.push(loop, engine)
      ratio[String(n)] = Math.round((engine.msgs_per_s / loop.msgs_per_s) * 100) / 100
    }
  } finally {
    await sink.close()
    await nats.dispose()
    await redis.dispose()
  }
  return { at: new Date().toISOString(), cores: (await import('node:os')).availableParallelism(), rows, engine_vs_loop: ratio }
}

function table (r: BenchResult): string {
  const lines = ['| mode | messages | msgs/s | CPU µs/msg | peak RSS MB |', '|---|---:|---:|---:|---:|']
  for (const x of r.rows) lines.push(`| ${x.mode} | ${x.messages} | ${x.msgs_per_s} | ${x.cpu_us_per_msg} | ${x.peak_rss_mb} |`)
  lines.push('', `engine / plain loop: ${Object.entries(r.engine_vs_loop).map(([n, v]) => `${n}: ${Math.round(v * 100)} %`).join(', ')}`)
  return lines.join('\n')
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const result = await runEngineBench({ quick: process.argv.includes('--quick'), full: process.argv.includes('--full') })
  const out = new URL('../../bench/results/engine.json', import.meta.url)
  mkdirSync(new URL('.', out), { recursive: true })
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n')
  process.stdout.write(JSON.stringify(result) + '\n\n' + table(result) + '\n')
  process.exit(0)
}
