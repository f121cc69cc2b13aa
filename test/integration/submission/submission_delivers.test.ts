import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook } from '../../helpers/webhooks.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { dkimResult, queuedId, startSubmissionScenario, submissionClient, type SubmissionScenario } from '../../helpers/submission.ts'
import { verifySignature } from '../../../webhooks/sign.ts'

let s: SubmissionScenario
let rx: HttpsReceiver
let events: EventWatcher

before(async () => {
  rx = await HttpsReceiver.start()
  s = await startSubmissionScenario({ OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true' })
  events = await EventWatcher.start(s.ob.proc.nc, s.org.orgId)
})
after(async () => {
  events.stop()
  await s.close()
  await rx.close()
})

test('a message sent with nodemailer over STARTTLS + AUTH is delivered once per recipient, DKIM-signed, ' +
  'with events, webhooks and its record', async () => {
  const wh = await putWebhook(s.ob, s.org, { url: rx.url('/hook'), events: ['delivered'] })
  const key = await s.ob.key(s.org, ['send'])
  const client = submissionClient(s.port, key)
  const info = await client.sendMail({
    from: `Grüße App <app@${s.org.domain}>`,
    to: 'to1@dest.example',
    cc: 'cc1@dest.example',
    bcc: 'bcc1@dest.example',
    subject: 'Grüße aus Köln',
    text: 'Hello there\n.\nsecond line',
    html: '<p>Hello <a href="https://example.org/x">there</a></p>',
    headers: { 'X-Outbox-Metadata': JSON.stringify({ user: 'u1', note: 'ärger' }), 'X-Outbox-Tags': 'welcome, onboarding' }
  })
  client.close()
  const id = queuedId(info.response)
  assert.deepEqual(info.accepted.sort(), ['bcc1@dest.example', 'cc1@dest.example', 'to1@dest.example'])

  await events.until(() => events.of(id, 'delivered').length === 3)
  const delivered = events.of(id, 'delivered')[0]!
  assert.deepEqual(delivered.data.metadata, { user: 'u1', note: 'ärger' })
  assert.deepEqual(delivered.data.tags, ['welcome', 'onboarding'], 'X-Outbox-Tags become the message\'s tags')
  assert.equal(delivered.data.subject, 'Grüße aus Köln')
  assert.equal(delivered.data.from, `app@${s.org.domain}`)

  for (const rcpt of ['to1@dest.example', 'cc1@dest.example', 'bcc1@dest.example']) {
    const got = s.sink.to(rcpt)
    assert.equal(got.length, 1, rcpt)
    const m = got[0]!
    const text = m.raw.toString('utf8')
    const head = text.slice(0, text.indexOf('\r\n\r\n'))
    assert.doesNotMatch(head, /^X-Outbox-/im)
    assert.doesNotMatch(head, /^Bcc:/im)
    assert.match(head, /^List-Unsubscribe: <http/m)
    assert.match(head, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m)
    assert.equal(m.messageId, info.messageId, 'the application\'s Message-ID is kept')
    assert.match(m.mailFrom, new RegExp(`@bounces\\.${s.org.domain.replace(/\./g, '\\.')}$`), 'VERP return path')
    // links are not rewritten: the MIME is sent as written
    assert.ok(text.includes('https://example.org/x'))
    assert.equal(await dkimResult(s.ob, s.org, m.raw), 'pass')
    // a changed byte breaks the signature: the check can fail
    assert.notEqual(await dkimResult(s.ob, s.org, Buffer.from(text.replace('Hello there', 'Hello thera'))), 'pass')
  }

  const hooks = await rx.waitFor(3)
  for (const r of hooks) {
    assert.equal(verifySignature(r.rawBody, r.headers['x-service-signature'] as string, wh.secret).ok, true)
    assert.deepEqual(JSON.parse(r.rawBody.toString('utf8')).data.tags, ['welcome', 'onboarding'])
  }

  await eventually(async () => (await s.ob.request('GET', `/v1/messages/${id}`, { key: s.org.adminKey })).status === 200,
    'the message record')
  const rec = await s.ob.request('GET', `/v1/messages/${id}`, { key: s.org.adminKey })
  assert.equal(rec.body.subject, 'Grüße aus Köln')
  assert.deepEqual(rec.body.metadata, { user: 'u1', note: 'ärger' })
  assert.deepEqual(rec.body.tags, ['welcome', 'onboarding'])
  const tagged = await s.ob.request('GET', '/v1/messages?tag=onboarding', { key: s.org.adminKey })
  assert.deepEqual(tagged.body.data.map((m: { id: string }) => m.id), [id])
})

test('the same Message-ID from the same key within 24 h is answered 250 with the first id and not sent again', async () => {
  const key = await s.ob.key(s.org, ['send'])
  const client = submissionClient(s.port, key)
  const mail = {
    from: `app@${s.org.domain}`, to: 'dup@dest.example', subject: 'once', text: 'only once', messageId: `<dup-${Date.now()}@app.example>`
  }
  const first = await client.sendMail(mail)
  const second = await client.sendMail(mail)
  client.close()
  const id = queuedId(first.response)
  assert.equal(queuedId(second.response), id)
  assert.match(second.response, /not sent again/)
  await events.until(() => events.of(id, 'delivered').length === 1)
  await nothingHappensFor(1000) // a second message from the repeated submission would be at the sink by now
  assert.equal(s.sink.to('dup@dest.example').length, 1)
})

test('a message without Message-ID or Date gets both (RFC 6409 §8), the Message-ID naming the message id', async () => {
  const key = await s.ob.key(s.org, ['send'])
  const client = submissionClient(s.port, key)
  const raw = `From: app@${s.org.domain}\r\nTo: bare@dest.example\r\nSubject: raw\r\n\r\nbody\r\n`
  const info = await client.sendMail({ envelope: { from: `app@${s.org.domain}`, to: ['bare@dest.example'] }, raw })
  client.close()
  const id = queuedId(info.response)
  await events.until(() => events.of(id, 'delivered').length === 1)
  const text = s.sink.to('bare@dest.example')[0]!.raw.toString('utf8')
  assert.match(text, new RegExp(`^Message-ID: <${id}@${s.org.domain.replace(/\./g, '\\.')}>$`, 'm'))
  assert.match(text, /^Date: .+ \+0000$/m)
  assert.equal(await dkimResult(s.ob, s.org, s.sink.to('bare@dest.example')[0]!.raw), 'pass')
})

test('a sandbox key (ob_test_) simulates: events as for HTTP sandbox sends, nothing reaches the sink', async () => {
  const key = await s.ob.key(s.org, ['send'], 'test')
  const client = submissionClient(s.port, key)
  const info = await client.sendMail({ from: `app@${s.org.domain}`, to: 'delivered@simulator.test', subject: 'sandbox', text: 'x' })
  client.close()
  const id = queuedId(info.response)
  await events.until(() => events.of(id, 'delivered').length === 1)
  assert.equal(s.sink.to('delivered@simulator.test').length, 0)
})

test('AUTH LOGIN works as well as AUTH PLAIN; the accepted count is on /metrics', async () => {
  const key = await s.ob.key(s.org, ['send'])
  const client = submissionClient(s.port, key, { authMethod: 'LOGIN' })
  const info = await client.sendMail({ from: `app@${s.org.domain}`, to: 'login@dest.example', subject: 'login', text: 'x' })
  client.close()
  const id = queuedId(info.response)
  await events.until(() => events.of(id, 'delivered').length === 1)
  assert.match(await s.ob.proc.gateway!.deps.metrics.render(), /^outbox_smtp_submissions_total \d+$/m)
})
