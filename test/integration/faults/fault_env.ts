import { jetstreamManager } from '@nats-io/jetstream'
import { connect, type NatsConnection } from '@nats-io/transport-node'
import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Agent, fetch as undiciFetch } from 'undici'
import { STREAM_OUTBOUND, STREAM_WEBHOOK_JOBS } from '../../../protocol/mod.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Shared pieces of the fault tests: HTTP sends that survive connection errors (recorded, not thrown), an
 * engine in a child process that can be SIGKILLed, and the end-of-test checks "everything accepted was
 * delivered" and "nothing is left pending in JetStream".
 */

export const ENGINE_CHILD = fileURLToPath(new URL('../../helpers/engine_child.js', import.meta.url))

/** `code`: the error code of a refusal's JSON body (`queue_full`, `service_unavailable`, …). */
export interface SendResult { status: number, id?: string, code?: string, retryAfter?: string | null, error?: string, ms: number }

const agent = new Agent({ keepAliveTimeout: 1000, connections: 32 })

export function sendBody (org: TestOrg, to: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { from: `App <hello@${org.domain}>`, to, subject: 'Fault test', text: 'hello', track_opens: false, track_clicks: false, ...extra }
}

/** One POST /v1/messages/send; a connection error is status 0 with the error text, never a throw. */
export async function send (
  baseUrl: string, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}
): Promise<SendResult> {
  const started = Date.now()
  try {
    const res = await undiciFetch(`${baseUrl}/v1/messages/send`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000)
    })
    const text = await res.text()
    let parsed: { id?: string, error?: { code?: string } } | undefined
    try { parsed = JSON.parse(text) as typeof parsed } catch { parsed = undefined }
    const id = parsed?.id
    const code = parsed?.error?.code
    return {
      status: res.status, ...(res.status === 202 && id !== undefined ? { id } : {}), ...(code !== undefined ? { code } : {}),
      retryAfter: res.headers.get('retry-after'), ms: Date.now() - started
    }
  } catch (err) {
    return { status: 0, error: String((err as Error).cause ?? err), ms: Date.now() - started }
  }
}

/** Sends `count` messages, `concurrency` at a time; `to(i)` names the recipient of the i-th. */
export async function sendMany (
  baseUrl: string, key: string, org: TestOrg, count: number, to: (i: number) => string, concurrency = 8, pauseMs = 0
): Promise<SendResult[]> {
  const results: SendResult[] = new Array(count)
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const i = next++
      results[i] = await send(baseUrl, key, sendBody(org, to(i)))
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs))
    }
  }))
  return results
}

/** Clients posting one send after another until `stop()`: the load the outage tests inject faults into. */
export function startSendLoad (
  baseUrl: string, key: string, org: TestOrg, prefix: string, senders = 4
): { results: SendResult[], stop: () => Promise<void> } {
  const results: SendResult[] = []
  let running = true
  let n = 0
  const loops = Array.from({ length: senders }, async () => {
    while (running) {
      results.push(await send(baseUrl, key, sendBody(org, `${prefix}${n++}@dest.example`)))
      await sleep(10)
    }
  })
  return { results, stop: async () => { running = false; await Promise.all(loops) } }
}

/** Sends flow: the last `n` answers of a send load are all 202. */
export function sendsFlow (results: SendResult[], n = 8): boolean {
  const tail = results.slice(-n)
  return tail.length === n && tail.every((r) => r.status === 202)
}

/** How many answers of a send load from the `from`-th on are 202. */
export function acceptedSince (results: SendResult[], from: number): number {
  return results.slice(from).filter((r) => r.status === 202).length
}

export function acceptedIds (results: SendResult[]): string[] {
  return results.filter((r) => r.status === 202 && r.id !== undefined).map((r) => r.id!)
}

/** Message-ID at the sink → how many SMTP transactions carried it. */
export function sinkCounts (sink: SmtpSink): Map<string, number> {
  const counts = new Map<string, number>()
  for (const m of sink.messages) counts.set(m.messageId, (counts.get(m.messageId) ?? 0) + 1)
  return counts
}

export function messageIdHeader (org: TestOrg, id: string): string {
  return `<${id}@${org.domain}>`
}

/** Resolves once every id has reached the sink (by Message-ID). */
export async function untilDelivered (sink: SmtpSink, org: TestOrg, ids: string[], timeoutMs = 60_000): Promise<void> {
  const want = ids.map((id) => messageIdHeader(org, id))
  await sink.until(() => { const c = sinkCounts(sink); return want.every((w) => c.has(w)) }, timeoutMs)
}

export interface PendingState {
  outboundMessages: number
  consumers: Array<{ name: string, pending: number, ackPending: number }>
  webhookJobs: number
}

/** What is left in OB_OUTBOUND (work queue: a finished message is gone) and in the webhook job stream. */
export async function pendingState (nc: NatsConnection): Promise<PendingState> {
  const jsm = await jetstreamManager(nc)
  const info = await jsm.streams.info(STREAM_OUTBOUND)
  const consumers: PendingState['consumers'] = []
  for await (const c of jsm.consumers.list(STREAM_OUTBOUND)) {
    consumers.push({ name: c.name, pending: c.num_pending, ackPending: c.num_ack_pending })
  }
  let webhookJobs = 0
  try {
    for await (const c of jsm.consumers.list(STREAM_WEBHOOK_JOBS)) webhookJobs += c.num_pending + c.num_ack_pending
  } catch { /* no webhook job stream yet: nothing can be pending there */ }
  return { outboundMessages: info.state.messages, consumers, webhookJobs }
}

/** No consumer holds or owes a message and no webhook job waits (messages may still be stored, see nats_restart). */
export function consumersIdle (s: PendingState): boolean {
  return s.webhookJobs === 0 && s.consumers.every((c) => c.pending === 0 && c.ackPending === 0)
}

export function nothingPending (s: PendingState): boolean {
  return s.outboundMessages === 0 && s.webhookJobs === 0 && s.consumers.every((c) => c.pending === 0 && c.ackPending === 0)
}

/** Resolves with the pending state once `done` holds for it (engines ack just after their events). */
export async function untilNothingPending (
  natsUrl: string, timeoutMs?: number, done: (s: PendingState) => boolean = nothingPending
): Promise<PendingState> {
  const nc = await connect({ servers: natsUrl })
  try {
    let last: PendingState | undefined
    return await eventually(async () => { last = await pendingState(nc); return done(last) ? last : undefined },
      () => `nothing pending; last seen ${JSON.stringify(last)}`, timeoutMs, 200)
  } finally {
    await nc.close()
  }
}

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }

/** An engine (OB_ROLE=engine) in its own process; resolves once it consumes. */
export async function startEngineChild (env: Record<string, string>): Promise<ChildProcess> {
  const c = spawn(process.execPath, [ENGINE_CHILD], {
    env: { PATH: process.env.PATH, OB_ENGINE_ACK_WAIT_MS: '2000', OB_SHUTDOWN_TIMEOUT_MS: '2000', ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  await new Promise<void>((resolve, reject) => {
    c.stdout!.on('data', (b: Buffer) => { if (b.toString().includes('ready')) resolve() })
    c.once('exit', (code) => reject(new Error(`engine child exited with ${code}`)))
  })
  return c
}

export async function killChild (c: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
  if (c.exitCode !== null || c.signalCode !== null) return c.exitCode
  return await new Promise((resolve) => { c.once('exit', (code) => resolve(code)); c.kill(signal) })
}

export async function closeAgent (): Promise<void> {
  await agent.close().catch(() => {})
}

export interface RelayWorld {
  nats: ServerProcess
  redis: ServerProcess
  sink: SmtpSink
  ob: TestOutbox
  org: TestOrg
  key: string
  close: () => Promise<void>
}

/**
 * NATS and Redis of the test's own (so they can be killed), an SMTP sink, one Outbox running every part and
 * relaying to the sink, and a send key: the world of the outage tests. `env` adds the test's own settings.
 */
export async function startRelayWorld (env: Record<string, string> = {}): Promise<RelayWorld> {
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis()
  const sink = await SmtpSink.start({ keepRaw: false })
  const ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'all', OB_SMTP_RELAY: sink.url, ...env } })
  const org = await ob.org()
  const key = await ob.key(org, ['send'])
  return {
    nats, redis, sink, ob, org, key,
    async close () {
      await ob.close()
      await closeAgent()
      await sink.close()
      await nats.dispose()
      await redis.dispose()
    }
  }
}
