import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { simpleParser } from 'mailparser'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { OUTBOUND_SUBJECTS, outboundSubject, shardOf, type QueuedMessage } from '../../../protocol/mod.ts'
import { ContentStore, openContentStore } from '../../../stores/content/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { freePort } from '../../helpers/ports.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { dkimResult, queuedId, submissionClient } from '../../helpers/submission.ts'
import { body, sendKey } from './helpers.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'

// A nats-server as an operator runs it: the stock 1 MB max_payload. Messages up to the 10 MB body limit are still
// accepted (their content goes to the object store) and delivered byte for byte.
let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let key: string
let events: EventWatcher
let content: ContentStore
let submissionPort: number
/** Every queued message as published, by message id. */
const queued = new Map<string, Buffer>()

before(async () => {
  nats = await ServerProcess.nats({ stockMaxPayload: true })
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start()
  submissionPort = await freePort()
  ob = await TestOutbox.start({
    nats, redis, env: { OB_ROLE: 'all', OB_SMTP_RELAY: sink.url, OB_SMTP_SUBMISSION_PORT: String(submissionPort) }
  })
  assert.equal(ob.proc.nc.info?.max_payload, 1024 * 1024)
  org = await ob.org('pro')
  key = await sendKey(ob, org)
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
  content = await openContentStore(ob.proc.nc, ob.proc.config)
  ob.proc.nc.subscribe(OUTBOUND_SUBJECTS, {
    callback: (_err, m) => { queued.set(m.headers?.get('Nats-Msg-Id') ?? '', Buffer.from(m.data)) }
  })
  await ob.proc.nc.flush()
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

/** Sends one message whose request body is about `bodyBytes` long, with a random attachment. */
async function sendWithAttachment (
  rcpt: string, bodyBytes: number
): Promise<{ status: number, id: string, attachment: Buffer, text: string }> {
  const attachment = randomBytes(Math.floor((bodyBytes - 1000) / 4) * 3)
  const r = await ob.request('POST', '/v1/messages/send', {
    key,
    body: body(org, {
      to: rcpt,
      text: 'Large attachment',
      attachments: [{ filename: 'data.bin', content: attachment.toString('base64'), content_type: 'application/octet-stream' }]
    })
  })
  return { status: r.status, id: r.body?.id, attachment, text: r.text }
}

async function assertDelivered (id: string, rcpt: string): Promise<Buffer> {
  await events.until(() => events.of(id, 'delivered').length === 1, 60_000)
  const got = sink.to(rcpt)
  assert.equal(got.length, 1)
  assert.equal(await dkimResult(ob, org, got[0]!.raw), 'pass')
  // the object is deleted once every recipient has its final outcome
  await eventually(async () => !(await content.has(id)), 'content deleted', 10_000)
  return got[0]!.raw
}

for (const [label, size] of [['2 MB', 2 * 1024 * 1024], ['9.5 MB', 9.5 * 1024 * 1024]] as const) {
  test(`a ${label} send is accepted and delivered byte-exact with a verifying DKIM signature; ` +
    'its stored content is then gone', async () => {
    const rcpt = `large-${label.replace(/\W/g, '')}@dest.example`
    const sent = await sendWithAttachment(rcpt, size)
    assert.equal(sent.status, 202, sent.text)
    // what was published carries a reference instead of the content, well under the server's 1 MB
    const published = queued.get(sent.id)!
    assert.ok(published.length < 64 * 1024)
    const msg = JSON.parse(published.toString()) as QueuedMessage
    assert.deepEqual(msg.attachments, [])
    assert.ok(msg.content_ref !== undefined && msg.content_ref.size > size / 2)
    const raw = await assertDelivered(sent.id, rcpt)
    const parsed = await simpleParser(raw)
    assert.equal(parsed.attachments.length, 1)
    assert.ok(parsed.attachments[0]!.content.equals(sent.attachment), 'attachment byte-exact')
    assert.equal(parsed.text?.trim(), 'Large attachment')
  })
}

test('a send over the 10 MB body limit is refused with 413', async () => {
  const sent = await sendWithAttachment('large-over@dest.example', 10.5 * 1024 * 1024)
  assert.equal(sent.status, 413, sent.text)
})

test('a 3 MB message submitted by SMTP is delivered byte-exact with a verifying DKIM signature', async () => {
  const rcpt = 'large-smtp@dest.example'
  const attachment = randomBytes(3 * 1024 * 1024)
  const client = submissionClient(submissionPort, key)
  const info = await client.sendMail({
    from: `app@${org.domain}`, to: rcpt, subject: 'Large submission', text: 'See attached',
    attachments: [{ filename: 'big.bin', content: attachment }]
  })
  client.close()
  const id = queuedId(info.response)
  const raw = await assertDelivered(id, rcpt)
  const parsed = await simpleParser(raw)
  assert.ok(parsed.attachments[0]!.content.equals(attachment), 'attachment byte-exact')
})

test('a stream message delivered again after its content was deleted (an engine that stopped before acknowledging) ' +
  'is not sent again', async () => {
  const rcpt = 'large-again@dest.example'
  const sent = await sendWithAttachment(rcpt, 2 * 1024 * 1024)
  assert.equal(sent.status, 202, sent.text)
  await assertDelivered(sent.id, rcpt)
  // what JetStream would hand out again had the engine died between the delete and the acknowledgement
  await jetstream(ob.proc.nc).publish(outboundSubject(shardOf(sent.id, ob.proc.config.engine.shards)), queued.get(sent.id)!)
  await nothingHappensFor(1500) // the copy handed out again, were it sent, would be at the sink by now
  assert.equal(sink.to(rcpt).length, 1)
  assert.equal(events.of(sent.id, 'delivered').length, 1)
})

test('stored content expires after 72 h plus the retry span plus an hour (about 5.9 days by default), ' +
  'and a changed schedule changes it at the next start', async () => {
  const jsm = await jetstreamManager(ob.proc.nc)
  const maxAgeS = async (): Promise<number> => (await jsm.streams.info('OBJ_ob_outbound_content')).config.max_age / 1e9
  const span = ob.proc.config.delivery.retryScheduleS.reduce((a, b) => a + b, 0)
  assert.equal(await maxAgeS(), 72 * 3600 + span + 3600)
  await ContentStore.open(ob.proc.nc, { replicas: 1, ttlMs: 3600_000 })
  assert.equal(await maxAgeS(), 3600)
  await openContentStore(ob.proc.nc, ob.proc.config)
  assert.equal(await maxAgeS(), 72 * 3600 + span + 3600)
})
