import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { outboundConsumer, outboundSubject, shardOf, splitContent, STREAM_OUTBOUND } from '../../../protocol/mod.ts'
import { openContentStore, type ContentStore } from '../../../stores/content/mod.ts'
import type { HttpResult } from '../../helpers/outbox.ts'
import { engineHoldsBack, type EventWatcher, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { readMessage } from '../../helpers/read_after_write.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'

/**
 * Large messages (content stored apart) end with an event in every case: a copy of a rescheduled message that is
 * dropped leaves the content to the copy that is sent, and a message whose content is gone ends `failed` with
 * `failure_category: content_unavailable` for every recipient and leaves the stream, once, instead of being
 * terminated without an event (which nats-server 2.9 ignores anyway when the termination carries a reason).
 */
let scenario: RelayScenario
let events: EventWatcher
let key: string
let content: ContentStore
const ACK_WAIT_MS = 2000

before(async () => {
  scenario = await startRelayScenario({
    env: { OB_ROLE: 'all', OB_DELIVERY_RETRY_SCHEDULE: '12,12', OB_ENGINE_ACK_WAIT_MS: String(ACK_WAIT_MS) }
  })
  events = scenario.events
  key = await scenario.ob.key(scenario.org, ['send', 'read'])
  content = await openContentStore(scenario.ob.proc.nc, scenario.ob.proc.config)
})
after(async () => { await scenario.close() })

async function sendLarge (to: string, at: Date): Promise<string> {
  const attachment = randomBytes(600 * 1024).toString('base64')
  const body = {
    from: `App <hello@${scenario.org.domain}>`, to, subject: 'Large', text: 'Large', scheduled_at: at.toISOString(),
    attachments: [{ filename: 'a.bin', content: attachment, content_type: 'application/octet-stream' }]
  }
  const r = await scenario.ob.request('POST', '/v1/messages/send', { key, body })
  assert.equal(r.status, 202, r.text)
  assert.equal((await readMessage(scenario.ob, r.body.id, key)).status, 200)
  return r.body.id
}

const reschedule = async (id: string, at: Date): Promise<HttpResult> =>
  await scenario.ob.request('PATCH', `/v1/messages/${id}`, { key, body: { scheduled_at: at.toISOString() } })

async function pendingOnShard (id: string): Promise<number> {
  const jsm = await jetstreamManager(scenario.ob.proc.nc)
  const info = await jsm.consumers.info(STREAM_OUTBOUND, outboundConsumer(shardOf(id, scenario.ob.proc.config.engine.shards)))
  return info.num_ack_pending + info.num_pending
}

test('a large message rescheduled earlier and then deferred keeps its content when its first copy comes back, ' +
  'and is delivered at its retry', async () => {
  const rcpt = 'tempfail-large@dest.example'
  const id = await sendLarge(rcpt, new Date(Date.now() + 9000))
  await eventually(async () => await engineHoldsBack(scenario.ob, id), 'the engine to hold the first copy back until its time')
  assert.equal((await reschedule(id, new Date(Date.now() + 500))).status, 200)
  // the copy published by the reschedule is attempted (451) and waits 12 s; the first copy comes back meanwhile
  await events.until(() => events.of(id, 'deferred').length === 1, 20_000)
  await events.until(() => events.of(id, 'delivered').length === 1, 40_000)
  assert.equal(scenario.sink.to(rcpt).length, 1)
  assert.deepEqual(events.of(id).map((e) => e.type), ['deferred', 'delivered'])
  await eventually(async () => !(await content.has(id)), 'content deleted once delivered', 10_000)
  await eventually(async () => (await pendingOnShard(id)) === 0, 'no copy left in the stream', 10_000)
})

test('a large message whose stored content is gone ends failed (content_unavailable) for every recipient, once, ' +
  'and leaves the stream', async () => {
  const msg = queuedMessage(scenario.org, { to: ['gone-a@dest.example', 'gone-b@dest.example'] })
  const { message } = splitContent(msg) // its content is never stored: as if it had expired
  await jetstream(scenario.ob.proc.nc)
    .publish(outboundSubject(shardOf(msg.id, scenario.ob.proc.config.engine.shards)), message, { msgID: msg.id })
  await events.until(() => events.of(msg.id, 'failed').length === 2, 20_000)
  for (const e of events.of(msg.id, 'failed')) {
    assert.equal(e.data.failure_category, 'content_unavailable')
    assert.match(String(e.data.reason), /stored content .* gone/)
  }
  await eventually(async () => (await pendingOnShard(msg.id)) === 0, 'the message left the stream', 10_000)
  await eventually(async () => (await scenario.ob.request('GET', `/v1/messages/${msg.id}`, { key })).body?.status === 'failed',
    'reads failed', 10_000)
  // it does not come back after the ack wait: no second round of events
  await nothingHappensFor(ACK_WAIT_MS * 2)
  assert.equal(events.of(msg.id).length, 2)
  assert.equal(scenario.sink.messages.filter((m) => m.rcptTo.some((r) => r.startsWith('gone-'))).length, 0)
})

test('a large message whose stored content does not match its reference ends failed (content_unavailable) and is never sent', async () => {
  const msg = queuedMessage(scenario.org, { to: ['mismatch@dest.example'] })
  const { message } = splitContent(msg)
  await content.put(msg.id, Buffer.from(JSON.stringify({ attachments: [], text: 'something else' })))
  await jetstream(scenario.ob.proc.nc)
    .publish(outboundSubject(shardOf(msg.id, scenario.ob.proc.config.engine.shards)), message, { msgID: msg.id })
  await events.until(() => events.of(msg.id, 'failed').length === 1, 20_000)
  const [e] = events.of(msg.id, 'failed')
  assert.equal(e!.data.failure_category, 'content_unavailable')
  assert.match(String(e!.data.reason), /does not match/)
  await eventually(async () => (await pendingOnShard(msg.id)) === 0, 'the message left the stream', 10_000)
  assert.equal(scenario.sink.to('mismatch@dest.example').length, 0)
})
