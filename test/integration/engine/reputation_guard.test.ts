import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ReportScenario, arf } from '../../helpers/reports.ts'
import type { TestOrg } from '../../helpers/outbox.ts'
import { EventWatcher } from '../../helpers/engine_env.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook } from '../../helpers/webhooks.ts'
import { freePort } from '../../helpers/ports.ts'
import { submissionClient } from '../../helpers/submission.ts'
import { eventually } from '../../helpers/waiting.ts'

// Low thresholds, so a handful of outcomes decide: a stream pauses at 50 % hard bounces or 20 % complaints, from 4 sends on.
let s: ReportScenario
let rx: HttpsReceiver
let a: TestOrg
let b: TestOrg
let eventsA: EventWatcher
let submissionPort: number

before(async () => {
  submissionPort = await freePort()
  rx = await HttpsReceiver.start()
  s = await ReportScenario.start({
    OB_SMTP_SUBMISSION_PORT: String(submissionPort),
    OB_WEBHOOK_CA_FILE: testCa().caFile,
    OB_WEBHOOK_ALLOW_PRIVATE: 'true',
    OB_REPUTATION_MIN_VOLUME: '4',
    OB_REPUTATION_MAX_BOUNCE_PCT: '50',
    OB_REPUTATION_MAX_COMPLAINT_PCT: '20'
  })
  a = await s.ob.org()
  b = await s.ob.org()
  eventsA = await EventWatcher.start(s.ob.proc.nc, a.orgId)
  await putWebhook(s.ob, a, { url: rx.url('/a'), events: ['stream.paused', 'stream.resumed'] })
})
after(async () => {
  eventsA.stop()
  await s.close()
  await rx.close()
})

const send = async (org: TestOrg, key: string, to: string | string[]) => await s.ob.request('POST', '/v1/messages/send', {
  key, body: { from: `news@${org.domain}`, to, subject: 'Hello', text: 'Hi there' }
})
const reputation = async (org: TestOrg) => (await s.ob.request('GET', '/v1/reputation', { key: org.adminKey })).body
const stream = async (org: TestOrg) => (await reputation(org)).streams.find((x: { stream: string }) => x.stream === 'transactional')
const hooks = (type: string): any[] => rx.on('/a').map((r) => JSON.parse(r.rawBody.toString())).filter((e) => e.type === type)

test('sandbox bounces never count; live hard bounces past the threshold pause the stream', async () => {
  const sandbox = await s.ob.key(a, ['send'], 'test')
  for (let i = 0; i < 4; i++) assert.equal((await send(a, sandbox, 'bounce@dest.example')).status, 202)
  await eventsA.until(() => eventsA.events.filter((e) => e.type === 'bounced').length === 4)
  assert.equal((await stream(a)).status, 'active')

  const r = await send(a, a.adminKey, ['ok1@remote.test', 'ok2@remote.test', 'permfail1@remote.test', 'permfail2@remote.test'])
  assert.equal(r.status, 202)
  const paused = await eventually(async () => { const x = await stream(a); return x.status === 'paused' ? x : undefined }, 'stream paused')
  assert.equal(paused.paused.reason, 'bounce_rate')
  // the four sandbox bounces are not in the window that tripped
  assert.deepEqual(paused.paused.counts, { delivered: 2, hard_bounced: 2, complained: 0 })
  assert.deepEqual(paused.paused.rates, { volume: 4, bounce_rate: 0.5, complaint_rate: 0 })
  const rep = await reputation(a)
  assert.deepEqual(rep.thresholds, { complaint_rate: 0.2, bounce_rate: 0.5, min_volume: 4 })
  assert.equal(rep.window_hours, 24)
})

test('a send on the paused stream is 423 stream_paused naming why; sandbox sends and other organisations go on', async () => {
  const r = await send(a, a.adminKey, 'later@remote.test')
  assert.equal(r.status, 423)
  assert.equal(r.body.error.code, 'stream_paused')
  assert.match(r.body.error.message, /hard-bounce rate reached 50 %.*POST \/v1\/reputation\/streams\/transactional\/resume/)
  assert.equal(r.body.error.details.stream, 'transactional')
  assert.equal(r.body.error.details.reason, 'bounce_rate')
  const batch = await s.ob.request('POST', '/v1/messages/batch', {
    key: a.adminKey, body: { messages: [{ from: `news@${a.domain}`, to: 'x@remote.test', subject: 'S', text: 'T' }] }
  })
  assert.equal(batch.status, 423)
  assert.equal(batch.body.error.code, 'stream_paused')
  assert.equal((await send(a, await s.ob.key(a, ['send'], 'test'), 'anyone@dest.example')).status, 202, 'sandbox goes on')
  assert.equal((await send(b, b.adminKey, 'fine@remote.test')).status, 202, 'another organisation goes on')
  assert.equal((await stream(b)).status, 'active')
})

test('the organisation\'s webhook gets stream.paused; metrics show the pause and the rates', async () => {
  const e = await eventually(() => hooks('stream.paused')[0], 'stream.paused at the receiver')
  assert.equal(e.data.stream, 'transactional')
  assert.equal(e.data.reason, 'bounce_rate')
  assert.deepEqual(e.data.counts, { delivered: 2, hard_bounced: 2, complained: 0 })
  const text = (await s.ob.request('GET', '/metrics')).text
  assert.match(text, new RegExp(`^outbox_stream_paused\\{organization="${a.orgId}",stream="transactional"\\} 1$`, 'm'))
  assert.match(text, new RegExp(`^outbox_reputation_bounce_rate\\{organization="${a.orgId}",stream="transactional"\\} 0.5$`, 'm'))
  assert.match(text, new RegExp(`^outbox_reputation_volume\\{organization="${a.orgId}",stream="transactional"\\} 4$`, 'm'))
})

test('an admin resumes: sends go again, the window starts from zero, the webhook gets stream.resumed', async () => {
  const reader = await s.ob.key(a, ['read'])
  const path = '/v1/reputation/streams/transactional/resume'
  assert.equal((await s.ob.request('POST', path, { key: reader })).status, 403, 'manage is needed')
  const r = await s.ob.request('POST', path, { key: a.adminKey })
  assert.equal(r.status, 200)
  assert.equal(r.body.status, 'active')
  const after = await stream(a)
  assert.equal(after.status, 'active')
  assert.equal(after.counts.hard_bounced, 0, 'the window that tripped is gone')
  assert.equal((await send(a, a.adminKey, 'ok3@remote.test')).status, 202)
  const e = await eventually(() => hooks('stream.resumed')[0], 'stream.resumed at the receiver')
  assert.equal(e.data.resumed_by, 'admin')
  assert.equal((await s.ob.request('POST', path, { key: a.adminKey })).status, 404, 'not paused any more')
  const audit = await s.ob.request('GET', '/v1/audit-log', { key: a.adminKey })
  assert.ok(audit.body.data.some((x: { action: string, target: string }) => x.action === 'stream.resumed' && x.target === 'transactional'))
})

test('complaints past their threshold pause too; SMTP submission answers 550; the operator resumes', async () => {
  for (let i = 0; i < 3; i++) await s.send(b, `reader${i}@remote.test`)
  const sent = await s.send(b, 'annoyed@remote.test')
  await eventually(async () => (await stream(b)).counts.delivered === 5, 'five deliveries counted')
  await s.deliver(sent.returnPath, arf({ to: sent.returnPath, recipient: 'annoyed@remote.test', originalId: sent.id, domain: b.domain }))
  const paused = await eventually(async () => { const x = await stream(b); return x.status === 'paused' ? x : undefined }, 'stream paused')
  assert.equal(paused.paused.reason, 'complaint_rate')
  assert.deepEqual(paused.paused.counts, { delivered: 5, hard_bounced: 0, complained: 1 })

  const smtp = submissionClient(submissionPort, b.adminKey)
  try {
    await assert.rejects(smtp.sendMail({ from: `news@${b.domain}`, to: 'x@remote.test', subject: 'S', text: 'T' }), (err: any) => {
      assert.equal(err.responseCode, 550)
      assert.match(err.response, /5\.7\.1 Sending on stream transactional is paused.*complaint rate reached 20 %/)
      return true
    })
  } finally { smtp.close() }

  const op = (await s.ob.proc.cp.operatorKeys.create('reputation')).value
  const r = await s.ob.request('POST', `/v1/operator/organizations/${b.orgId}/streams/transactional/resume`, { key: op })
  assert.equal(r.status, 200)
  assert.equal((await send(b, b.adminKey, 'again@remote.test')).status, 202)
})
