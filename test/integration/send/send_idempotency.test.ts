import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { REDIS_KEYS } from '../../../protocol/mod.ts'
import { fingerprint } from '../../../gateway/idempotency/mod.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import { startGateway, outboundOf, sendKey, body, suppress } from './helpers.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await startGateway()
  org = await ob.org('enterprise')
  key = await sendKey(ob, org)
})
after(async () => { await ob.close() })

const send = async (idem: string, b: unknown, path = '/v1/messages/send'): Promise<Awaited<ReturnType<TestOutbox['request']>>> =>
  await ob.request('POST', path, {
    key, rawBody: JSON.stringify(b), headers: { 'content-type': 'application/json', 'idempotency-key': idem }
  })

test('the same key and body replays the first response with Idempotent-Replayed and queues nothing new', async () => {
  const b = body(org, { to: 'replay@example.net' })
  const first = await send('order-1001', b)
  assert.equal(first.status, 202, first.text)
  assert.equal(first.headers.get('idempotent-replayed'), null)
  const again = await send('order-1001', b)
  assert.equal(again.status, 202)
  assert.equal(again.headers.get('idempotent-replayed'), 'true')
  assert.equal(again.text, first.text)
  const stored = (await outboundOf(ob, org)).filter((m) => m.msg.to[0] === 'replay@example.net')
  assert.equal(stored.length, 1)
})

test('the same key with a different body is 422 idempotency_key_reused', async () => {
  assert.equal((await send('order-1002', body(org))).status, 202)
  const r = await send('order-1002', body(org, { subject: 'Different' }))
  assert.equal(r.status, 422)
  assert.equal(r.body.error.code, 'idempotency_key_reused')
  const batch = await send('order-1002', { messages: [body(org)] }, '/v1/messages/batch')
  assert.equal(batch.status, 422, 'a key used on /send does not replay on /batch')
})

test('the same key while the first request is in flight is 409 conflict', async () => {
  const b = body(org, { to: 'inflight@example.net' })
  const raw = Buffer.from(JSON.stringify(b))
  // The state a gateway leaves while it waits for the PubAck of the first request.
  await ob.proc.redis.set(REDIS_KEYS.idempotency(org.orgId, 'order-1003'), 'p' + fingerprint('/v1/messages/send', raw) + 'req_other',
    'PX', 60_000)
  const r = await send('order-1003', b)
  assert.equal(r.status, 409, r.text)
  assert.equal(r.body.error.code, 'conflict')
  assert.equal(r.body.error.field, 'Idempotency-Key')
})

test('a failed first attempt does not hold the key: the retry is processed', async () => {
  await suppress(ob, org, 'blocked@example.net')
  const b = body(org, { to: 'blocked@example.net' })
  const first = await send('order-1004', b)
  assert.equal(first.status, 422)
  const forbidden = await send('order-1005', body(org, { from: 'x@elsewhere.test' }))
  assert.equal(forbidden.status, 403)
  const fixed = await send('order-1005', body(org, { to: 'fixed@example.net' }))
  assert.equal(fixed.status, 202, 'the key of a refused request is free again, whatever the body')
})

test('50 concurrent sends with one key and body queue exactly one message and never answer 5xx', async () => {
  const b = body(org, { to: 'concurrent@example.net' })
  const results = await Promise.all(Array.from({ length: 50 }, async () => await send('order-2000', b)))
  const statuses = results.map((r) => r.status)
  assert.ok(statuses.every((s) => s === 202 || s === 409), JSON.stringify(statuses))
  const accepted = results.filter((r) => r.status === 202)
  assert.ok(accepted.length >= 1)
  assert.equal(new Set(accepted.map((r) => r.body.id)).size, 1, 'every 202 names the same message')
  const stored = (await outboundOf(ob, org)).filter((m) => m.msg.to[0] === 'concurrent@example.net')
  assert.equal(stored.length, 1)
})

test('batches are idempotent as a whole', async () => {
  const b = { messages: [body(org, { to: 'b1@example.net' }), body(org, { to: 'b2@example.net' })] }
  const first = await send('batch-1', b, '/v1/messages/batch')
  assert.equal(first.status, 202, first.text)
  const again = await send('batch-1', b, '/v1/messages/batch')
  assert.equal(again.headers.get('idempotent-replayed'), 'true')
  assert.equal(again.text, first.text)
  const stored = (await outboundOf(ob, org)).filter((m) => m.msg.to[0] === 'b1@example.net' || m.msg.to[0] === 'b2@example.net')
  assert.equal(stored.length, 2)
})

test('keys are per organisation', async () => {
  const other = await ob.org('pro')
  const otherKey = await sendKey(ob, other)
  assert.equal((await send('shared-key', body(org))).status, 202)
  const r = await ob.request('POST', '/v1/messages/send', {
    key: otherKey, rawBody: JSON.stringify(body(other)), headers: { 'content-type': 'application/json', 'idempotency-key': 'shared-key' }
  })
  assert.equal(r.status, 202)
  assert.equal(r.headers.get('idempotent-replayed'), null)
})

test('an Idempotency-Key over 255 characters or with control characters is 400', async () => {
  const long = await send('k'.repeat(256), body(org))
  assert.equal(long.status, 400)
  assert.equal(long.body.error.field, 'Idempotency-Key')
  const tab = await send('a\tb', body(org))
  assert.equal(tab.status, 400)
  assert.equal(tab.body.error.field, 'Idempotency-Key')
  assert.equal((await send('k'.repeat(255), body(org))).status, 202)
})
