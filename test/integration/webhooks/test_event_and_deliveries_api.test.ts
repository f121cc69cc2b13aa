import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { putWebhook, setWebhookStatus, webhookNow } from '../../helpers/webhooks.ts'
import { verifySignature } from '../../../webhooks/sign.ts'

let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
let key: string
before(async () => {
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1' }
  })
  org = await ob.org()
  key = await ob.key(org, ['manage'])
})
after(async () => { await ob.close(); await rx.close() })

test('POST /test sends a signed test event of the chosen type, even to a paused webhook not subscribed to it', async () => {
  const wh = await putWebhook(ob, org, { url: rx.url('/test-event'), events: ['delivered'] })
  await setWebhookStatus(ob, wh, 'paused')
  const r = await ob.request('POST', `/v1/webhooks/${wh.id}/test`, { key, body: { type: 'clicked' } })
  assert.equal(r.status, 202)
  assert.match(r.body.event_id, /^evt_[0-9a-z]{26}$/)
  const [req] = await rx.waitFor(1, { path: '/test-event' })
  const body = JSON.parse(req!.rawBody.toString())
  assert.equal(body.id, r.body.event_id)
  assert.equal(body.type, 'clicked')
  assert.equal(body.data.test, true)
  assert.equal(typeof body.data.url, 'string')
  assert.equal(verifySignature(req!.rawBody, req!.headers['x-service-signature'] as string, wh.secret).ok, true)
  assert.equal(webhookNow(ob, wh)?.status, 'paused', 'a test event does not change the status')

  const inbound = await ob.request('POST', `/v1/webhooks/${wh.id}/test`, { key, body: { type: 'inbound' } })
  assert.equal(inbound.status, 202)
  const reqs = await rx.waitFor(2, { path: '/test-event' })
  assert.equal(JSON.parse(reqs[1]!.rawBody.toString()).type, 'inbound.received')
  assert.equal(body.environment, 'live', 'the environment of the key that asked')
  const sandboxKey = await ob.key(org, ['manage'], 'test')
  assert.equal((await ob.request('POST', `/v1/webhooks/${wh.id}/test`, { key: sandboxKey, body: { type: 'delivered' } })).status, 202)
  const third = (await rx.waitFor(3, { path: '/test-event' }))[2]!
  assert.equal(JSON.parse(third.rawBody.toString()).environment, 'test')
})

test('a failing test event is attempted once and does not fail the webhook', async () => {
  const long = 'é'.repeat(2000) // 4,000 bytes: the log keeps the first 1,024
  rx.script = (r) => (r.path === '/test-fail' ? { status: 500, body: long } : { status: 200 })
  const wh = await putWebhook(ob, org, { url: rx.url('/test-fail'), events: ['delivered'] })
  const r = await ob.request('POST', `/v1/webhooks/${wh.id}/test`, { key, body: { type: 'delivered' } })
  assert.equal(r.status, 202)
  const [sent] = await rx.waitFor(1, { path: '/test-fail' })
  await eventually(async () => (await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })).body.data.length === 1,
    'attempt logged')
  await nothingHappensFor(1500) // a retry (1 s) would be here by now
  assert.equal(rx.on('/test-fail').length, 1)
  assert.equal(webhookNow(ob, wh)?.status, 'active')
  const log = await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })
  assert.equal(log.body.data[0].event_id, r.body.event_id)
  assert.equal(log.body.data[0].status_code, 500)
  assert.equal(log.body.data[0].error, 'http_500')
  // marked as a test event (nothing to replay), with the start of what was sent and what came back
  assert.equal(log.body.data[0].test, true)
  assert.equal(log.body.data[0].request_body, sent!.rawBody.toString('utf8').slice(0, 2048))
  assert.equal(Buffer.byteLength(log.body.data[0].response_body), 1024)
  assert.ok(long.startsWith(log.body.data[0].response_body))
})

test('GET /deliveries pages newest first with a cursor', async () => {
  rx.script = () => ({ status: 200 })
  const wh = await putWebhook(ob, org, { url: rx.url('/paged'), events: ['delivered'] })
  const ids: string[] = []
  for (let i = 0; i < 5; i++) {
    ids.push((await ob.request('POST', `/v1/webhooks/${wh.id}/test`, { key, body: { type: 'delivered' } })).body.event_id)
    await rx.waitFor(i + 1, { path: '/paged' }) // one at a time, so the attempts are ordered
  }
  await eventually(async () => (await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })).body.data.length === 5,
    'five attempts logged')
  const first = await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries?limit=2`, { key })
  assert.equal(first.status, 200)
  assert.equal(first.body.has_more, true)
  assert.deepEqual(first.body.data.map((d: any) => d.event_id), [ids[4], ids[3]])
  for (const d of first.body.data) {
    assert.equal(d.status_code, 200)
    assert.equal(d.error, null)
    assert.equal(d.attempt, 1)
    assert.ok(Number.isInteger(d.duration_ms))
    assert.ok(!Number.isNaN(Date.parse(d.at)))
  }
  const second = await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries?limit=2&cursor=${first.body.next_cursor}`, { key })
  assert.deepEqual(second.body.data.map((d: any) => d.event_id), [ids[2], ids[1]])
  const third = await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries?limit=2&cursor=${second.body.next_cursor}`, { key })
  assert.deepEqual(third.body.data.map((d: any) => d.event_id), [ids[0]])
  assert.equal(third.body.has_more, false)
  assert.equal(third.body.next_cursor, null)
  const bad = await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries?cursor=nonsense`, { key })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.code, 'validation_error')
})

test('unknown webhook is 404, another organisation\'s is 403, an unknown type is 400, without manage 403', async () => {
  const missing = await ob.request('POST', '/v1/webhooks/wh_00000000000000000000000000/test', { key, body: { type: 'delivered' } })
  assert.equal(missing.status, 404)
  assert.equal(missing.body.error.code, 'not_found')
  const list404 = await ob.request('GET', '/v1/webhooks/wh_00000000000000000000000000/deliveries', { key })
  assert.equal(list404.status, 404)
  const other = await ob.org()
  const theirs = await putWebhook(ob, other, { url: rx.url('/theirs'), events: ['delivered'] })
  const forbidden = await ob.request('POST', `/v1/webhooks/${theirs.id}/test`, { key, body: { type: 'delivered' } })
  assert.equal(forbidden.status, 403)
  assert.equal(forbidden.body.error.code, 'forbidden')
  assert.equal((await ob.request('GET', `/v1/webhooks/${theirs.id}/deliveries`, { key })).status, 403)
  const mine = await putWebhook(ob, org, { url: rx.url('/mine'), events: ['delivered'] })
  const badType = await ob.request('POST', `/v1/webhooks/${mine.id}/test`, { key, body: { type: 'exploded' } })
  assert.equal(badType.status, 400)
  assert.equal(badType.body.error.code, 'validation_error')
  const sendOnly = await ob.key(org, ['send'])
  assert.equal((await ob.request('POST', `/v1/webhooks/${mine.id}/test`, { key: sendOnly, body: { type: 'delivered' } })).status, 403)
  await nothingHappensFor(300) // a test event the refused call had sent would be here by now
  assert.equal(rx.on('/theirs').length, 0)
})
