// test-group: long-wait — jobs handed back from a stalled endpoint come again after its 30 to 45 s back-off
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstream } from '@nats-io/jetstream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { eventually } from '../../helpers/waiting.ts'
import { publishEvent, putWebhook, sleep } from '../../helpers/webhooks.ts'
import { envelopeOf, newId, type EventRecord, type WebhookRecord } from '../../../protocol/mod.ts'
import { publishWebhookJobBatch, type WebhookJob } from '../../../stores/webhooks/mod.ts'

/**
 * Jobs parked in the job stream are written with a message id, so that writing the same jobs twice (an event fanned
 * out again after its engine stopped) stores them once. A job handed back to the stream (its endpoint stalled while
 * it waited there) is stored anew as its old message is acknowledged: that write must never be taken for a repeat of
 * the old one, else the job is gone. Likewise two batches that differ in any job are two writes.
 */
let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
let webhook: WebhookRecord
before(async () => {
  // The first request hangs 3 s: with one slot the endpoint is stalled a second later, with two jobs waiting for it.
  rx = await HttpsReceiver.start((_r, n) => (n === 0 ? { delayMs: 3000 } : { status: 200 }))
  ob = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_ENDPOINT_CONCURRENCY: '1' }
  })
  org = await ob.org()
  webhook = await putWebhook(ob, org, { url: rx.url('/hook'), events: ['delivered'] })
})
after(async () => { await ob.close(); await rx.close() })

function jobOf (n: number): WebhookJob {
  const now = Date.now()
  const record: EventRecord = {
    id: newId('evt'), type: 'delivered', timestamp: new Date(now).toISOString(), org_id: org.orgId, message_id: `msg_requeued_${n}`,
    data: { message_id: `msg_requeued_${n}`, to: 'a@example.net' }
  }
  return { event: envelopeOf(record), org_id: org.orgId, webhook_id: webhook.id, attempt: 1, due_at: now, created_at: now }
}

/** Parks jobs as the engine does: one message for one job, a batch message for several. */
async function park (jobs: WebhookJob[]): Promise<void> {
  await publishWebhookJobBatch(jetstream(ob.proc.nc), ob.proc.config.engine.shards, jobs, jobs.map(() => undefined))
}

const arrived = (): Set<string> => new Set(rx.on('/hook').map((r) => (JSON.parse(r.rawBody.toString()) as { id: string }).id))

/** The ids of `ids` not yet delivered to the webhook. */
const missing = (ids: readonly string[]): string[] => { const got = arrived(); return ids.filter((id) => !got.has(id)) }

test('jobs of a batch handed back from a stalled endpoint are stored again and delivered', { timeout: 180_000 }, async () => {
  const first = jobOf(0)
  const batch = [jobOf(1), jobOf(2)]
  await park([first])
  await park(batch)
  await rx.waitFor(1, { timeoutMs: 30_000 })
  // The endpoint's one slot hangs; the batch waits behind it. Events the webhook does not subscribe to keep the
  // engine pulling, and so looking at its endpoints: once the endpoint has been stalled for a second, the batch's
  // jobs are handed back to the job stream (stored again, the batch message acknowledged).
  for (let i = 0; i < 15; i++) { await publishEvent(ob, org, 'bounced'); await sleep(200) }
  const ids = batch.map((j) => j.event.id)
  await eventually(() => missing(ids).length === 0, () => `the jobs handed back; missing ${missing(ids).join(', ')}`, 120_000, 200)
  assert.deepEqual(missing(ids), [], 'every job handed back reaches the webhook')
})

test('a batch that repeats the first job of an earlier one but differs in another is stored, ' +
  'not taken for a repeat', { timeout: 60_000 }, async () => {
  const [a, b, c] = [jobOf(10), jobOf(11), jobOf(12)]
  await park([a, b])
  // The event of `a` fanned out again (its engine stopped before acknowledging it), parked with a newer event `c`.
  await park([a, c])
  const ids = [a, b, c].map((j) => j.event.id)
  await eventually(() => missing(ids).length === 0, () => `both batches; missing ${missing(ids).join(', ')}`, 30_000, 200)
  assert.deepEqual(missing(ids), [], 'both batches are delivered')
})
