import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { putWebhook, publishEvent } from '../../helpers/webhooks.ts'
import { verifySignature } from '../../../webhooks/sign.ts'
import { verifyWebhook } from '../../../docs/verify_webhook.ts'

let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
before(async () => {
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1' }
  })
  org = await ob.org()
})
after(async () => { await ob.close(); await rx.close() })

test('an event arrives as the exact envelope, signed over the raw body', async () => {
  const wh = await putWebhook(ob, org, { url: rx.url('/signed'), events: ['delivered'] })
  const evt = await publishEvent(ob, org, 'delivered', { delivered_at: '2026-01-01T00:00:00.000Z', smtp_response: '250 OK' })
  const [req] = await rx.waitFor(1, { path: '/signed' })
  assert.equal(req!.method, 'POST')
  assert.equal(req!.headers['content-type'], 'application/json')
  assert.equal(req!.headers['user-agent'], 'Outbox-Webhooks/1')
  const body = JSON.parse(req!.rawBody.toString('utf8'))
  assert.deepEqual(Object.keys(body), ['id', 'type', 'timestamp', 'environment', 'data'])
  assert.equal(body.environment, 'live')
  assert.equal(body.id, evt.id)
  assert.equal(body.type, 'delivered')
  assert.deepEqual(body.data.metadata, { order: '42' })
  const header = req!.headers['x-service-signature'] as string
  assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/)
  assert.equal(verifySignature(req!.rawBody, header, wh.secret).ok, true)
  assert.equal(verifyWebhook(req!.rawBody, header, wh.secret).ok, true)
  // One changed byte of the body, or the wrong secret, fails.
  const tampered = Buffer.from(req!.rawBody)
  tampered[tampered.length - 2] = tampered[tampered.length - 2]! ^ 1
  assert.equal(verifySignature(tampered, header, wh.secret).reason, 'signature_mismatch')
  assert.equal(verifyWebhook(tampered, header, wh.secret).reason, 'signature_mismatch')
  assert.equal(verifyWebhook(req!.rawBody, header, 'whsec_wrong').ok, false)
  // The same request replayed 6 minutes later is refused.
  const t = Number(/t=(\d+)/.exec(header)![1])
  assert.equal(verifyWebhook(req!.rawBody, header, wh.secret, { now: (t + 360) * 1000 }).reason, 'timestamp_out_of_tolerance')
  assert.equal(verifyWebhook(req!.rawBody, header, wh.secret, { now: (t + 299) * 1000 }).ok, true)
})

test('events are filtered by subscription; inbound and inbound.received both receive inbound.received', async () => {
  const onlyBounced = await putWebhook(ob, org, { url: rx.url('/bounced'), events: ['bounced'] })
  const alias = await putWebhook(ob, org, { url: rx.url('/alias'), events: ['inbound'] })
  const full = await putWebhook(ob, org, { url: rx.url('/full'), events: ['inbound.received', 'opened'] })
  const other = await ob.org()
  await putWebhook(ob, other, { url: rx.url('/other-org'), events: ['opened', 'bounced', 'inbound'] })
  const opened = await publishEvent(ob, org, 'opened')
  const inbound = await publishEvent(ob, org, 'inbound.received')
  const bounced = await publishEvent(ob, org, 'bounced')
  await publishEvent(ob, org, 'clicked')
  const ids = async (path: string, n: number): Promise<string[]> =>
    (await rx.waitFor(n, { path })).map((r) => JSON.parse(r.rawBody.toString()).id as string).sort()
  assert.deepEqual(await ids('/bounced', 1), [bounced.id])
  assert.deepEqual(await ids('/alias', 1), [inbound.id])
  assert.deepEqual(await ids('/full', 2), [opened.id, inbound.id].sort())
  // A later event delivered to all three proves nothing else was queued before it.
  const last = await publishEvent(ob, org, 'inbound.received')
  await rx.waitFor(2, { path: '/alias' })
  await rx.waitFor(3, { path: '/full' })
  assert.equal(rx.on('/bounced').length, 1)
  assert.equal(rx.on('/alias').length, 2)
  assert.equal(rx.on('/full').length, 3)
  assert.equal(JSON.parse(rx.on('/alias')[1]!.rawBody.toString()).id, last.id)
  assert.equal(rx.on('/other-org').length, 0)
  assert.ok(onlyBounced.id !== alias.id && alias.id !== full.id)
})
