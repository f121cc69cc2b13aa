import { writeFileSync, mkdirSync } from 'node:fs'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { jetstream } from '@nats-io/jetstream'
import { Pool } from 'undici'
import { pino } from 'pino'
import { loadConfig } from '../config/mod.ts'
import {
  ControlPlane, connectNats, connectRedis, redisReady, ensureStreams, eventSubject, newId, randomToken,
  type EventRecord, type WebhookRecord
} from '../engine/protocol/mod.ts'
import { startWebhookDelivery } from '../engine/webhook/mod.ts'
import { WebhookFanout } from '../engine/webhook/fanout.ts'
import { signatureHeader } from '../engine/webhook/sign.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { testCa } from '../test/helpers/https_receiver.ts'

/**
 * Signed webhook deliveries per second to a local HTTPS receiver, against a bare undici loop posting bodies of
 * the same size, signed the same way, to the same receiver with the same number of connections, in the same
 * run. Events are published to OB_EVENTS before the clock starts (which starts before the engine's webhook
 * delivery is started), so the figure is the webhook path alone: fan-out, signing, HTTPS, delivery log,
 * acknowledgements. Isolation: the rate to endpoint A alone, and with a second endpoint B subscribed to every
 * event that is dead (accepts, never answers), slow (answers after 2 s) or healthy; the drop a dead or slow B
 * causes is measured against A alone.
 */
export interface WebhookBenchOptions { events?: number, concurrency?: number, quick?: boolean, out?: string }

export interface WebhookBenchResult {
  events: number
  concurrency: number
  bare_undici_per_s: number
  webhooks_per_s: number
  ratio_to_bare: number
  /** Rate to the first endpoint while a dead endpoint (accepts, never answers) gets every event too. */
  healthy_with_dead_endpoint_per_s: number
  /** 1 - (A with a dead B) / (A alone): what a dead endpoint costs a healthy one. */
  dead_endpoint_drop: number
  /** Rate to the first endpoint while a slow endpoint (answers after SLOW_MS) gets every event too. */
  healthy_with_slow_endpoint_per_s: number
  /** 1 - (A with a slow B) / (A alone). */
  slow_endpoint_drop: number
  /** Rate to the first endpoint while a second, healthy endpoint gets every event too (twice the requests). */
  healthy_with_second_healthy_endpoint_per_s: number
}

/** How long the slow receiver takes to answer. */
export const SLOW_MS = 2000

export class Sink {
  private constructor (private readonly worker: Worker, readonly healthyPort: number, readonly otherPort: number, readonly deadPort: number, readonly slowPort: number) {}
  static async start (): Promise<Sink> {
    const ca = testCa()
    const worker = new Worker(new URL('./webhook_sink.js', import.meta.url), { workerData: { key: ca.key, cert: ca.cert, slowMs: SLOW_MS } })
    const [ports] = await once(worker, 'message') as [{ healthy: number, other: number, dead: number, slow: number }]
    return new Sink(worker, ports.healthy, ports.other, ports.dead, ports.slow)
  }

  async count (path: string): Promise<number> {
    this.worker.postMessage(`count ${path}`)
    const [m] = await once(this.worker, 'message') as [{ total: number }]
    return m.total
  }

  reset (): void { this.worker.postMessage('reset') }
  async close (): Promise<void> { this.worker.postMessage('close'); await once(this.worker, 'exit') }
}

function sampleBody (i: number): string {
  return JSON.stringify({
    id: newId('evt'),
    type: 'delivered',
    timestamp: new Date().toISOString(),
    data: { message_id: newId('msg'), to: `user${i}@example.com`, delivered_at: new Date().toISOString(), smtp_response: '250 2.0.0 OK ' + 'x'.repeat(700), metadata: { order: String(i), campaign: 'bench' } }
  })
}

/** The floor: one undici pool with the same connection count, posting signed bodies as fast as it can. */
export async function bareLoop (port: number, n: number, concurrency: number, caPem: string): Promise<number> {
  const pool = new Pool(`https://127.0.0.1:${port}`, { connections: concurrency, pipelining: 1, connect: { ca: caPem } })
  const bodies = Array.from({ length: 256 }, (_v, i) => sampleBody(i))
  let next = 0
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++
      const body = bodies[i & 255]!
      const res = await pool.request({ path: '/bare', method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signatureHeader('whsec_bench', body, Math.floor(Date.now() / 1000)) } })
      await res.body.dump()
    }
  }))
  const s = (performance.now() - start) / 1000
  await pool.close()
  return n / s
}

/** `second`: none, or a second endpoint (healthy, dead or slow) subscribed to every event like the first. */
export async function webhookRun (opts: { events: number, concurrency: number, second: 'none' | 'healthy' | 'dead' | 'slow', caFile: string, sink: Sink }): Promise<number> {
  const nats = await ServerProcess.nats()
  const redisServer = await ServerProcess.redis()
  const config = loadConfig({
    NATS_URL: nats.url,
    REDIS_URL: redisServer.url,
    OB_WEBHOOK_CA_FILE: opts.caFile,
    OB_WEBHOOK_ALLOW_PRIVATE: 'true',
    OB_WEBHOOK_ENDPOINT_CONCURRENCY: String(opts.concurrency),
    OB_WEBHOOK_TIMEOUT_MS: '30000'
  })
  const log = pino({ level: 'silent' })
  const nc = await connectNats(config.nats.servers, 'bench')
  const redis = connectRedis(config.redis.url, 'bench')
  try {
    await redisReady(redis)
    await ensureStreams(nc, 1)
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const orgId = newId('org')
    const now = new Date().toISOString()
    const hook = async (url: string): Promise<void> => {
      const w: WebhookRecord = { id: newId('wh'), org_id: orgId, url, events: ['delivered'], secret: `whsec_${randomToken(32)}`, status: 'active', created_at: now, updated_at: now }
      await cp.webhooks.put(`${orgId}.${w.id}`, w)
    }
    await hook(`https://127.0.0.1:${opts.sink.healthyPort}/hook`)
    if (opts.second === 'healthy') await hook(`https://127.0.0.1:${opts.sink.otherPort}/other`)
    if (opts.second === 'dead') await hook(`https://127.0.0.1:${opts.sink.deadPort}/dead`)
    if (opts.second === 'slow') await hook(`https://127.0.0.1:${opts.sink.slowPort}/slow`)
    // The fan-out consumer starts at new events: create it, then fill the stream before the clock starts.
    await WebhookFanout.ensureConsumer(nc)
    const js = jetstream(nc)
    const pending: Array<Promise<unknown>> = []
    for (let i = 0; i < opts.events; i++) {
      const body = JSON.parse(sampleBody(i)) as Omit<EventRecord, 'org_id'>
      const record: EventRecord = { ...body, type: 'delivered', org_id: orgId }
      pending.push(js.publish(eventSubject(orgId, 'delivered'), JSON.stringify(record), { msgID: record.id }))
      if (pending.length >= 512) await Promise.all(pending.splice(0))
    }
    await Promise.all(pending)
    opts.sink.reset()
    const start = performance.now()
    const delivery = await startWebhookDelivery(config, { nc, redis, cp, log })
    const deadline = Date.now() + 300_000
    while (await opts.sink.count('/hook') < opts.events && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
    const s = (performance.now() - start) / 1000
    await delivery.drain(1000)
    cp.close()
    return opts.events / s
  } finally {
    await nc.drain().catch(() => {})
    redis.disconnect()
    await nats.dispose()
    await redisServer.dispose()
  }
}

export async function runWebhookBench (opts: WebhookBenchOptions = {}): Promise<WebhookBenchResult> {
  const events = opts.events ?? (opts.quick === true ? 3000 : 20_000)
  const concurrency = opts.concurrency ?? 16
  const ca = testCa()
  const { readFileSync } = await import('node:fs')
  const caPem = readFileSync(ca.caFile, 'utf8')
  const sink = await Sink.start()
  try {
    await bareLoop(sink.healthyPort, Math.min(2000, events), concurrency, caPem) // warm-up
    const bare = await bareLoop(sink.healthyPort, events, concurrency, caPem)
    const run = async (second: 'none' | 'healthy' | 'dead' | 'slow'): Promise<number> => await webhookRun({ events, concurrency, second, caFile: ca.caFile, sink })
    const plain = await run('none')
    const withDead = await run('dead')
    const withSlow = await run('slow')
    const withHealthy = await run('healthy')
    const result: WebhookBenchResult = {
      events,
      concurrency,
      bare_undici_per_s: Math.round(bare),
      webhooks_per_s: Math.round(plain),
      ratio_to_bare: Number((plain / bare).toFixed(3)),
      healthy_with_dead_endpoint_per_s: Math.round(withDead),
      dead_endpoint_drop: Number((1 - withDead / plain).toFixed(3)),
      healthy_with_slow_endpoint_per_s: Math.round(withSlow),
      slow_endpoint_drop: Number((1 - withSlow / plain).toFixed(3)),
      healthy_with_second_healthy_endpoint_per_s: Math.round(withHealthy)
    }
    const out = opts.out ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'results', 'webhooks.json')
    mkdirSync(dirname(out), { recursive: true })
    writeFileSync(out, JSON.stringify({ ...result, at: new Date().toISOString(), node: process.version }, null, 2) + '\n')
    return result
  } finally {
    await sink.close()
  }
}

const pct = (x: number): string => `${Math.round(x * 100)} %`
/** A drop as text: "12 % lower", or "5 % higher" when the rate was higher. */
export const relativeDrop = (drop: number): string => drop >= 0 ? `${pct(drop)} lower` : `${pct(-drop)} higher`

/** The figures as a markdown table, as printed by the bench and copied into docs/webhooks.md. */
export function webhookMarkdown (r: WebhookBenchResult): string {
  return [
    '| measure | deliveries/s |',
    '|---|---|',
    `| bare undici loop (signed bodies, ${r.concurrency} connections) | ${r.bare_undici_per_s} |`,
    `| Outbox signed webhook deliveries | ${r.webhooks_per_s} (${pct(r.ratio_to_bare)} of the bare loop) |`,
    `| endpoint A, while a **dead** endpoint B gets every event too | ${r.healthy_with_dead_endpoint_per_s} (${relativeDrop(r.dead_endpoint_drop)} than A alone) |`,
    `| endpoint A, while a **slow** endpoint B (answers after ${SLOW_MS / 1000} s) gets every event too | ${r.healthy_with_slow_endpoint_per_s} (${relativeDrop(r.slow_endpoint_drop)} than A alone) |`,
    `| endpoint A, while a second **healthy** endpoint B gets every event too (twice the requests) | ${r.healthy_with_second_healthy_endpoint_per_s} |`
  ].join('\n')
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const quick = process.argv.includes('--quick')
  const r = await runWebhookBench({ quick })
  console.log(JSON.stringify(r))
  console.log('\n' + webhookMarkdown(r))
  process.exit(0)
}
