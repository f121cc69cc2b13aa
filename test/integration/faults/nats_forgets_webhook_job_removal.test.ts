import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { cpSync, existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { connect } from '@nats-io/transport-node'
import {
  STREAM_WEBHOOK_JOBS, newId, shardOf, webhookJobConsumer, webhookJobSubject, type WebhookRecord
} from '../../../protocol/mod.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook, publishEvent } from '../../helpers/webhooks.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'

/**
 * A nats-server killed after it removed an acknowledged webhook job from the job stream, but before it wrote down the
 * acknowledgement in the shard's consumer, comes back with the consumer still counting the job as un-acknowledged,
 * although there is no message behind it: nothing is ever delivered for it, so nothing would ever acknowledge it. The
 * test makes that happen for certain: the consumer's store is copied while the job's retry waits, the retry is made
 * and acknowledged, and the server is stopped and started on the stream's store with the consumer's copy. An older job
 * stays stored meanwhile (another webhook's, paused), as older work does in a busy stream: nats-server 2.9 drops an
 * entry below the stream's first stored message by itself, but not one above it.
 */
const SHARDS = 4
const env = {
  OB_ROLE: 'all', OB_ENGINE_SHARDS: String(SHARDS), OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true',
  // the retry falls due 10 s after the first attempt: long enough to stop the process and copy the store before it
  OB_WEBHOOK_RETRY_SCHEDULE: '10'
}
let nats: ServerProcess
let redis: ServerProcess
let rx: HttpsReceiver
before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  rx = await HttpsReceiver.start()
  rx.statuses(500, 200)
})
after(async () => { await rx.close(); await nats.dispose(); await redis.dispose() })

interface JobConsumerState { ackPending: number, pending: number, stored: number }

async function jobConsumer (name: string): Promise<JobConsumerState> {
  const nc = await connect({ servers: nats.url })
  try {
    const jsm = await jetstreamManager(nc)
    const c = await jsm.consumers.info(STREAM_WEBHOOK_JOBS, name)
    const s = await jsm.streams.info(STREAM_WEBHOOK_JOBS)
    return { ackPending: c.num_ack_pending, pending: c.num_pending, stored: s.state.messages }
  } finally {
    await nc.close()
  }
}

test('a webhook job a restarted NATS server still counts as un-acknowledged after its message was removed ' +
  'is released, and its event is not sent again', { timeout: 120_000 }, async () => {
  const obsDir = join(nats.dir, 'jetstream', '$G', 'streams', STREAM_WEBHOOK_JOBS, 'obs')
  const copy = join(nats.dir, '..', `${nats.dir.split('/').pop()!}-obs`)
  let webhook: WebhookRecord
  let org: TestOrg
  let consumer: string
  const first = await TestOutbox.start({ nats, redis, env })
  try {
    org = await first.org()
    webhook = await putWebhook(first, org, { url: rx.url('/hook'), events: ['delivered'] })
    consumer = webhookJobConsumer(shardOf(webhook.id, SHARDS))
    // the older job: a paused webhook's, on another shard, held in the stream all along
    let paused: WebhookRecord
    do paused = await putWebhook(first, org, { url: rx.url('/paused'), events: ['clicked'], status: 'paused' })
    while (shardOf(paused.id, SHARDS) === shardOf(webhook.id, SHARDS))
    const now = Date.now()
    const held = {
      event_seq: 1, event_id: newId('evt'), org_id: org.orgId, webhook_id: paused.id, attempt: 1, due_at: now, created_at: now
    }
    await jetstream(first.proc.nc).publish(webhookJobSubject(shardOf(paused.id, SHARDS), paused.id), JSON.stringify(held))
    await publishEvent(first, org, 'delivered')
    await rx.waitFor(1, { path: '/hook' })
    // the retry is stored and handed out to the engine, which hands it back until it is due
    await eventually(async () => (await jobConsumer(consumer)).ackPending === 1, 'the retry is handed out')
  } finally {
    await first.close()
  }
  // the consumer's store while the retry waits, un-acknowledged
  await nats.stop('SIGTERM')
  assert.ok(existsSync(join(obsDir, consumer)), 'the shard consumer is stored where expected')
  cpSync(obsDir, copy, { recursive: true })
  await nats.start()

  const second = await TestOutbox.start({ nats, redis, env })
  try {
    await rx.waitFor(2, { path: '/hook', timeoutMs: 30_000 })
    await eventually(async () => {
      const s = await jobConsumer(consumer)
      return s.ackPending === 0 && s.stored === 1
    }, 'the retry is acknowledged and removed, the held job is still stored')
  } finally {
    await second.close()
  }

  // the server forgets the acknowledgement: started on the stream's store with the consumer's from before it
  await nats.stop('SIGTERM')
  rmSync(obsDir, { recursive: true, force: true })
  cpSync(copy, obsDir, { recursive: true })
  rmSync(copy, { recursive: true, force: true })
  await nats.start()
  const ghost = await jobConsumer(consumer)
  assert.deepEqual(ghost, { ackPending: 1, pending: 0, stored: 1 }, 'the consumer counts the removed job as un-acknowledged')

  const third = await TestOutbox.start({ nats, redis, env })
  try {
    await eventually(async () => (await jobConsumer(consumer)).ackPending === 0, 'the entry without a message is released', 20_000)
    assert.equal((await jobConsumer(consumer)).stored, 1, 'the held job is still stored')
    await nothingHappensFor(2000)
    assert.equal(rx.on('/hook').length, 2, 'the event is not sent again')
  } finally {
    await third.close()
  }
})
