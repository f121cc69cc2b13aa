import { once } from 'node:events'
import { Worker } from 'node:worker_threads'
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { Pool } from 'undici'
import { pino } from 'pino'
import { loadConfig } from '../config/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { OutboxMetrics } from '../stores/metrics/mod.ts'
import { connectNats, connectRedis, redisReady, ensureJetStream, ensureStreams } from '../stores/clients/mod.ts'
import {
  eventSubject, jetStreamSettings, jetStreamTable, newId, randomToken, streamSettings, tablePart, STREAM_EVENTS, type EventRecord,
  type WebhookRecord
} from '../protocol/mod.ts'
import { startWebhookDelivery } from '../webhooks/mod.ts'
import { signatureHeader, signingKey } from '../webhooks/sign.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { testCa } from '../test/helpers/https_receiver.ts'

/**
 * What the webhook benchmark measures, each against the same receivers in the same run:
 * - bare:   one undici pool posting signed bodies as fast as it can (no queue, nothing durable);
 * - floor:  the least any durable delivery does per event: read it from OB_EVENTS with a JetStream consumer, sign
 *           its bytes, POST them through an undici pool, acknowledge it on the answer; no fan-out, no delivery
 *           log, no retries;
 * - Outbox: the engine's webhook delivery, to endpoint A alone or with a second endpoint B on every event.
 */

/** How long the slow receiver takes to answer. */
export const SLOW_MS = 2000

/** Receivers in a thread of their own: two healthy HTTPS servers, a dead one and a slow one. */
export class Sink {
  private constructor (
    private readonly worker: Worker,
    readonly healthyPort: number,
    readonly otherPort: number,
    readonly deadPort: number,
    readonly slowPort: number
  ) {}

  static async start (): Promise<Sink> {
    const ca = testCa()
    const worker = new Worker(new URL('./webhook_sink.js', import.meta.url), {
      workerData: { key: ca.key, cert: ca.cert, slowMs: SLOW_MS }
    })
    const [ports] = await once(worker, 'message') as [{ healthy: number, other: number, dead: number, slow: number }]
    return new Sink(worker, ports.healthy, ports.other, ports.dead, ports.slow)
  }

  async count (path: string): Promise<number> {
    this.worker.postMessage(`count ${path}`)
    const [m] = await once(this.worker, 'message') as [{ total: number }]
    return m.total
  }

  /** Resolves once `path` has received `n` requests, or after five minutes. */
  async until (path: string, n: number): Promise<void> {
    const deadline = Date.now() + 300_000
    while (await this.count(path) < n && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  }

  reset (): void { this.worker.postMessage('reset') }
  async close (): Promise<void> { this.worker.postMessage('close'); await once(this.worker, 'exit') }
}

function sampleBody (i: number): string {
  return JSON.stringify({
    id: newId('evt'),
    type: 'delivered',
    timestamp: new Date().toISOString(),
    data: {
      message_id: newId('msg'),
      to: `user${i}@example.com`,
      delivered_at: new Date().toISOString(),
      smtp_response: '250 2.0.0 OK ' + 'x'.repeat(700),
      metadata: { order: String(i), campaign: 'bench' }
    }
  })
}

/** Publishes `n` `delivered` events of about 1 KB for `orgId` to OB_EVENTS, 512 at a time. */
async function fillEvents (nc: NatsConnection, orgId: string, n: number): Promise<void> {
  const js = jetstream(nc)
  const pending: Array<Promise<unknown>> = []
  for (let i = 0; i < n; i++) {
    const body = JSON.parse(sampleBody(i)) as Omit<EventRecord, 'org_id'>
    const record: EventRecord = { ...body, type: 'delivered', org_id: orgId }
    pending.push(js.publish(eventSubject(orgId, 'delivered'), JSON.stringify(record), { msgID: record.id }))
    if (pending.length >= 512) await Promise.all(pending.splice(0))
  }
  await Promise.all(pending)
}

/** The bare loop: one undici pool with the same connection count, posting signed bodies as fast as it can. */
export async function bareLoop (port: number, n: number, concurrency: number, caPem: string): Promise<number> {
  const pool = new Pool(`https://127.0.0.1:${port}`, { connections: concurrency, pipelining: 1, connect: { ca: caPem } })
  const bodies = Array.from({ length: 256 }, (_v, i) => sampleBody(i))
  let next = 0
  const start = performance.now()
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++
      const body = bodies[i & 255]!
      const headers = {
        'content-type': 'application/json',
        'x-service-signature': signatureHeader('whsec_bench', body, Math.floor(Date.now() / 1000))
      }
      const res = await pool.request({ path: '/bare', method: 'POST', body, headers })
      await res.body.dump()
    }
  }))
  const s = (performance.now() - start) / 1000
  await pool.close()
  return n / s
}

/** Events read but not yet answered, at most; the consumer pulls 512 at a time like the fan-out. */
const FLOOR_MAX_IN_FLIGHT = 2048

/**
 * The floor: a durable delivery with nothing but its unavoidable steps. Each event is read from OB_EVENTS by
 * an explicit-ack pull consumer, its stored bytes are signed and POSTed as they are, and it is acknowledged
 * when the answer arrives.
 */
export async function floorRun (opts: { events: number, concurrency: number, caPem: string, sink: Sink }): Promise<number> {
  const nats = await ServerProcess.nats()
  const nc = await connectNats([nats.url], 'bench-floor')
  const pool = new Pool(`https://127.0.0.1:${opts.sink.healthyPort}`, { connections: opts.concurrency, pipelining: 1, connect: { ca: opts.caPem } })
  try {
    await ensureStreams(nc, streamSettings(loadConfig({ NATS_URL: nats.url })))
    await (await jetstreamManager(nc)).consumers.add(STREAM_EVENTS, {
      durable_name: 'bench_floor',
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.New,
      ack_wait: 60_000_000_000,
      max_ack_pending: 20_000
    })
    await fillEvents(nc, newId('org'), opts.events)
    opts.sink.reset()
    const key = signingKey(`whsec_${randomToken(32)}`)
    const start = performance.now()
    const messages = await (await jetstream(nc).consumers.get(STREAM_EVENTS, 'bench_floor')).consume({ max_messages: 512 })
    let inFlight = 0
    let wake: (() => void) | undefined
    const answered = (m: JsMsg, ok: boolean): void => {
      if (ok) m.ack()
      else m.nak()
      inFlight--
      const w = wake
      wake = undefined
      w?.()
    }
    const reading = (async () => {
      for await (const m of messages) {
        if (inFlight >= FLOOR_MAX_IN_FLIGHT) await new Promise<void>((resolve) => { wake = resolve })
        inFlight++
        const signature = signatureHeader(key, m.data, Math.floor(Date.now() / 1000))
        const headers = ['content-type', 'application/json', 'x-service-signature', signature]
        pool.dispatch({ path: '/floor', method: 'POST', body: m.data, headers }, {
          onConnect () {},
          onHeaders () { return true },
          onData () { return true },
          onComplete () { answered(m, true) },
          onError () { answered(m, false) }
        })
      }
    })()
    await opts.sink.until('/floor', opts.events)
    const s = (performance.now() - start) / 1000
    await messages.close()
    await reading
    return opts.events / s
  } finally {
    await pool.close()
    await nc.drain().catch(() => {})
    await nats.dispose()
  }
}

/** Outbox: `second` is none, or a second endpoint (healthy, dead or slow) subscribed to every event like the first. */
/** The endpoint subscribed beside the first one in a webhook run. */
export type SecondEndpoint = 'none' | 'healthy' | 'dead' | 'slow'

export interface WebhookRunOptions { events: number, concurrency: number, second: SecondEndpoint, caFile: string, sink: Sink }

export async function webhookRun (opts: WebhookRunOptions): Promise<number> {
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
    await ensureStreams(nc, streamSettings(config))
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const orgId = newId('org')
    const now = new Date().toISOString()
    const hook = async (url: string): Promise<void> => {
      const w: WebhookRecord = {
        id: newId('wh'),
        org_id: orgId,
        url,
        events: ['delivered'],
        secret: `whsec_${randomToken(32)}`,
        status: 'active',
        created_at: now,
        updated_at: now
      }
      await cp.webhooks.put(`${orgId}.${w.id}`, w)
    }
    await hook(`https://127.0.0.1:${opts.sink.healthyPort}/hook`)
    if (opts.second === 'healthy') await hook(`https://127.0.0.1:${opts.sink.otherPort}/other`)
    if (opts.second === 'dead') await hook(`https://127.0.0.1:${opts.sink.deadPort}/dead`)
    if (opts.second === 'slow') await hook(`https://127.0.0.1:${opts.sink.slowPort}/slow`)
    // The fan-out consumer starts at new events: create it, then fill the stream before the clock starts.
    await ensureJetStream(nc, tablePart(jetStreamTable(jetStreamSettings(config)), 'webhooks'))
    await fillEvents(nc, orgId, opts.events)
    opts.sink.reset()
    const start = performance.now()
    const delivery = await startWebhookDelivery(config, { nc, redis, cp, log, metrics: new OutboxMetrics() })
    await opts.sink.until('/hook', opts.events)
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
