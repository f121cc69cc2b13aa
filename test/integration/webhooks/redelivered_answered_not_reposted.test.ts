import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { jetstream } from '@nats-io/jetstream'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { publishEvent, putWebhook } from '../../helpers/webhooks.ts'
import { nothingHappensFor } from '../../helpers/waiting.ts'
import { killChild, startEngineChild } from '../faults/fault_env.ts'
import {
  CONSUMER_WEBHOOK_FANOUT, STREAM_EVENTS, STREAM_WEBHOOK_JOBS, envelopeOf, shardOf, webhookJobConsumer, type EventRecord, type WebhookRecord
} from '../../../protocol/mod.ts'
import { DeliveryLog, deliveryId, publishWebhookJobBatch, type WebhookJob } from '../../../stores/webhooks/mod.ts'

/**
 * An engine that stops after posting some events of a job message (a batch of up to 128 of one webhook's events), or
 * after posting an event it was fanning out, never acknowledges that message; JetStream hands it out again. The next
 * engine posts only the events the webhook has not answered with a 2xx (the delivery log's record), not the whole
 * batch again. Here the first engine's work is stood in for: the answers are recorded in the delivery log as it
 * records them, and the message is taken from the consumer and handed back unacknowledged, so it comes redelivered.
 */
const SHARDS = 4

let nats: ServerProcess
let redis: ServerProcess
let rx: HttpsReceiver
let ob: TestOutbox
let org: TestOrg
let webhook: WebhookRecord
let engine: ChildProcess | undefined

const engineEnv = (): Record<string, string> => ({
  NATS_URL: nats.url,
  REDIS_URL: redis.url,
  OB_ENGINE_SHARDS: String(SHARDS),
  OB_WEBHOOK_CA_FILE: testCa().caFile,
  OB_WEBHOOK_ALLOW_PRIVATE: 'true'
})

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway', OB_ENGINE_SHARDS: String(SHARDS) } })
  org = await ob.org()
  webhook = await putWebhook(ob, org, { url: rx.url('/hook'), events: ['delivered'] })
  // An engine start creates the job stream and its consumers; it is stopped before the work below is stored.
  engine = await startEngineChild(engineEnv())
  await killChild(engine)
  engine = undefined
})
after(async () => {
  if (engine !== undefined) await killChild(engine)
  await ob.close()
  await rx.close()
  await nats.dispose()
  await redis.dispose()
})

/** Records `events` as answered 200 by the webhook, as an engine does after each successful attempt. */
async function recordAnswered (events: readonly EventRecord[]): Promise<void> {
  const log = new DeliveryLog(ob.proc.redis)
  await Promise.all(events.map(async (e) => {
    await log.record(webhook.id, {
      id: deliveryId(), event_id: e.id, event_type: e.type, attempt: 1, status_code: 200, duration_ms: 5, error: null,
      at: new Date().toISOString(), test: false, request_body: null, response_body: 'ok'
    }, e.timestamp)
  }))
}

/** Takes the next message of a durable consumer and hands it back at once, unacknowledged: it comes again as redelivered. */
async function handBack (stream: string, consumer: string): Promise<void> {
  const m = await (await jetstream(ob.proc.nc).consumers.get(stream, consumer)).next({ expires: 5000 })
  assert.ok(m !== null, `a message on ${consumer}`)
  m.nak()
}

const posted = (): string[] => rx.on('/hook').map((r) => (JSON.parse(r.rawBody.toString()) as { id: string }).id)

test('a batch handed out again posts only the events its webhook has not answered', { timeout: 60_000 }, async () => {
  const events: EventRecord[] = []
  for (let i = 0; i < 10; i++) events.push(await publishEvent(ob, org, 'delivered'))
  // The fan-out consumer would hand these to the engine below too: they are taken and acknowledged here, so only the
  // batch message carries them.
  const fanout = await jetstream(ob.proc.nc).consumers.get(STREAM_EVENTS, CONSUMER_WEBHOOK_FANOUT)
  for (let i = 0; i < events.length; i++) (await fanout.next({ expires: 5000 }))!.ack()
  const now = Date.now()
  const jobs: WebhookJob[] = events.map((e) => ({
    event: envelopeOf(e), org_id: org.orgId, webhook_id: webhook.id, attempt: 1, due_at: now, created_at: now
  }))
  await publishWebhookJobBatch(jetstream(ob.proc.nc), SHARDS, jobs, jobs.map(() => undefined))
  const answered = events.slice(0, 6)
  await recordAnswered(answered)
  await handBack(STREAM_WEBHOOK_JOBS, webhookJobConsumer(shardOf(webhook.id, SHARDS)))

  engine = await startEngineChild(engineEnv())
  await rx.waitFor(4, { timeoutMs: 20_000 })
  await nothingHappensFor(1500) // anything more would be a repeat
  assert.deepEqual(posted().sort(), events.slice(6).map((e) => e.id).sort(), 'only the four unanswered events')
  await killChild(engine)
  engine = undefined
})

test('an event handed out again by the fan-out goes only to the webhooks that have not answered it', { timeout: 60_000 }, async () => {
  if (engine !== undefined) { await killChild(engine); engine = undefined }
  const before = posted().length
  await putWebhook(ob, org, { url: rx.url('/second'), events: ['delivered'] })
  const e = await publishEvent(ob, org, 'delivered')
  await recordAnswered([e]) // the first webhook answered it before its engine stopped
  await handBack(STREAM_EVENTS, CONSUMER_WEBHOOK_FANOUT)

  engine = await startEngineChild(engineEnv())
  await rx.waitFor(1, { path: '/second', timeoutMs: 20_000 })
  await nothingHappensFor(1500) // a repeat to either webhook would be here by now
  assert.deepEqual(rx.on('/second').map((r) => (JSON.parse(r.rawBody.toString()) as { id: string }).id), [e.id],
    'the webhook that had not answered gets it')
  assert.equal(posted().length, before, 'the webhook that answered it does not get it again')
})
