import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa, type ReceivedRequest } from '../../helpers/https_receiver.ts'
import { publishEvent, putWebhook, webhookNow } from '../../helpers/webhooks.ts'
import { verifySignature } from '../../../webhooks/sign.ts'
import { verifyWebhook } from '../../../docs/verify_webhook.ts'
import { verifyWebhook as clientVerifyWebhook } from '../../../client/src/verify_webhook.ts'

let ob: TestOutbox
let rx: HttpsReceiver
let org: TestOrg
let key: string
before(async () => {
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1' }
  })
  org = await ob.org()
  key = await ob.key(org, ['manage'])
})
after(async () => { await ob.close(); await rx.close() })

const standardHeaders = (req: ReceivedRequest): Record<string, string> => ({
  'webhook-id': req.headers['webhook-id'] as string,
  'webhook-timestamp': req.headers['webhook-timestamp'] as string,
  'webhook-signature': req.headers['webhook-signature'] as string
})

async function createWebhook (path: string): Promise<{ id: string, secret: string }> {
  const r = await ob.request('POST', '/v1/webhooks', { key, body: { url: rx.url(path), events: ['delivered'] } })
  assert.equal(r.status, 201)
  return { id: r.body.id, secret: r.body.secret }
}

test('every request carries webhook-id, webhook-timestamp and webhook-signature ' +
  'that standardwebhooks verifies with the secret as returned', async () => {
  // The first attempt fails, so the retry shows that webhook-id stays the event id.
  rx.script = (req) => ({ status: req.path === '/std' && rx.on('/std').length === 1 ? 500 : 200 })
  const wh = await createWebhook('/std')
  const evt = await publishEvent(ob, org, 'delivered')
  const reqs = await rx.waitFor(2, { path: '/std' })
  for (const req of reqs) {
    assert.equal(req.headers['webhook-id'], evt.id)
    assert.match(req.headers['webhook-timestamp'] as string, /^\d{10}$/)
    assert.match(req.headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]{43}=$/)
    const payload = new Webhook(wh.secret).verify(req.rawBody.toString('utf8'), standardHeaders(req)) as { id: string }
    assert.equal(payload.id, evt.id)
    // X-Service-Signature is unchanged: keyed with the whole secret string, one v1.
    assert.match(req.headers['x-service-signature'] as string, /^t=\d+,v1=[0-9a-f]{64}$/)
    assert.equal(verifySignature(req.rawBody, req.headers['x-service-signature'] as string, wh.secret).ok, true)
  }
  assert.throws(() => new Webhook(`whsec_${Buffer.from('another key').toString('base64')}`)
    .verify(reqs[0]!.rawBody.toString('utf8'), standardHeaders(reqs[0]!)))
})

test('rotate-secret: during the grace period both secrets verify both headers; with 0 only the new one does', async () => {
  rx.script = () => ({ status: 200 })
  const wh = await createWebhook('/rotate')
  const r = await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, { key, body: { grace_period_minutes: 60 } })
  assert.equal(r.status, 200)
  assert.match(r.body.secret, /^whsec_[A-Za-z0-9]{32}$/)
  assert.notEqual(r.body.secret, wh.secret)
  const expires = Date.parse(r.body.previous_secret_expires_at)
  assert.ok(Math.abs(expires - (Date.now() + 3600_000)) < 10_000)
  // The webhook as read never shows either secret.
  const read = await ob.request('GET', `/v1/webhooks/${wh.id}`, { key })
  assert.equal(read.text.includes(r.body.secret) || read.text.includes(wh.secret) || 'previous_secret' in read.body, false)

  const evt = await publishEvent(ob, org, 'delivered')
  const [req] = await rx.waitFor(1, { path: '/rotate' })
  assert.equal(req!.headers['webhook-id'], evt.id)
  const header = req!.headers['x-service-signature'] as string
  assert.match(header, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/)
  assert.match(req!.headers['webhook-signature'] as string, /^v1,\S+ v1,\S+$/)
  for (const secret of [r.body.secret as string, wh.secret]) {
    assert.equal(verifySignature(req!.rawBody, header, secret).ok, true)
    assert.equal(verifyWebhook(req!.rawBody, header, secret).ok, true)
    assert.equal(await clientVerifyWebhook(req!.rawBody, header, secret), true)
    new Webhook(secret).verify(req!.rawBody.toString('utf8'), standardHeaders(req!))
  }

  // A rotation without grace: only the newest secret signs.
  const r0 = await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, { key, body: { grace_period_minutes: 0 } })
  assert.equal(r0.status, 200)
  assert.ok(Math.abs(Date.parse(r0.body.previous_secret_expires_at) - Date.now()) < 10_000)
  await publishEvent(ob, org, 'delivered')
  const [, second] = await rx.waitFor(2, { path: '/rotate' })
  const header2 = second!.headers['x-service-signature'] as string
  assert.match(header2, /^t=\d+,v1=[0-9a-f]{64}$/)
  assert.equal(verifySignature(second!.rawBody, header2, r0.body.secret).ok, true)
  assert.equal(verifySignature(second!.rawBody, header2, r.body.secret).ok, false)
  new Webhook(r0.body.secret).verify(second!.rawBody.toString('utf8'), standardHeaders(second!))
  assert.throws(() => new Webhook(r.body.secret).verify(second!.rawBody.toString('utf8'), standardHeaders(second!)))
})

test('rotate-secret retried with the same Idempotency-Key answers the same secret and rotates once', async () => {
  const wh = await createWebhook('/rotate-idem')
  const headers = { 'idempotency-key': `rot-${wh.id}` }
  const first = await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, { key, body: { grace_period_minutes: 5 }, headers })
  const again = await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, { key, body: { grace_period_minutes: 5 }, headers })
  assert.equal(first.status, 200)
  assert.equal(again.status, 200)
  assert.equal(again.headers.get('idempotent-replayed'), 'true')
  assert.deepEqual(again.body, first.body)
  const record = webhookNow(ob, { org_id: org.orgId, id: wh.id } as never)!
  assert.equal(record.secret, first.body.secret)
  assert.equal(record.previous_secret, wh.secret, 'the original secret is the previous one: one rotation, not two')
  // The same key with another body is refused; a call without a key rotates again.
  const other = await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, { key, body: { grace_period_minutes: 6 }, headers })
  assert.equal(other.status, 422)
  assert.equal(other.body.error.code, 'idempotency_key_reused')
  const plain = await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, { key, body: { grace_period_minutes: 5 } })
  assert.notEqual(plain.body.secret, first.body.secret)
})

test('rotate-secret refuses bad input and another organisation\'s webhook, changing nothing', async () => {
  const wh = await createWebhook('/rotate-bad')
  for (const body of [
    {}, { grace_period_minutes: -1 }, { grace_period_minutes: 10_081 }, { grace_period_minutes: 1.5 }, { grace_period_minutes: '5' },
    { grace_period_minutes: 5, extra: 1 }
  ]) {
    const r = await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, { key, body })
    assert.equal(r.status, 400, JSON.stringify(body))
    assert.equal(r.body.error.code, 'validation_error')
  }
  const max = await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, { key, body: { grace_period_minutes: 10_080 } })
  assert.equal(max.status, 200)

  const other = await ob.org()
  const otherWh = await putWebhook(ob, other, { url: rx.url('/other'), events: ['delivered'] })
  const r = await ob.request('POST', `/v1/webhooks/${otherWh.id}/rotate-secret`, { key, body: { grace_period_minutes: 5 } })
  assert.equal(r.status, 403)
  assert.equal(r.body.error.code, 'forbidden')
  assert.equal(webhookNow(ob, otherWh)?.secret, otherWh.secret)
  const missing = await ob.request('POST', '/v1/webhooks/wh_0000000000000000000000000z/rotate-secret', {
    key, body: { grace_period_minutes: 5 }
  })
  assert.equal(missing.status, 404)
  const readOnly = await ob.key(org, ['read'])
  assert.equal((await ob.request('POST', `/v1/webhooks/${wh.id}/rotate-secret`, {
    key: readOnly, body: { grace_period_minutes: 5 }
  })).status, 403)
})
