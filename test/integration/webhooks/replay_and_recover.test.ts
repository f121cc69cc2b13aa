import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Webhook } from 'standardwebhooks'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa, type ReceivedRequest } from '../../helpers/https_receiver.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { publishEvent, putWebhook, setWebhookStatus, sleep, webhookNow } from '../../helpers/webhooks.ts'
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
  key = await ob.key(org, ['manage', 'read'])
})
after(async () => { await ob.close(); await rx.close() })

const idOf = (r: ReceivedRequest): string => JSON.parse(r.rawBody.toString('utf8')).id
const ids = (path: string): string[] => rx.on(path).map(idOf)

/** Waits until the read model (what replay and recover read) holds the event. */
async function stored (eventId: string): Promise<void> {
  await eventually(async () => {
    const events = (await ob.request('GET', '/v1/events?limit=100', { key })).body.data
    return events.some((e: { id: string }) => e.id === eventId)
  }, `event ${eventId} stored`)
}

test('replay sends the event again with the same id and a fresh signature, logged as a delivery', async () => {
  rx.script = () => ({ status: 200 })
  const wh = await putWebhook(ob, org, { url: rx.url('/replay'), events: ['delivered'] })
  const evt = await publishEvent(ob, org, 'delivered')
  const [first] = await rx.waitFor(1, { path: '/replay' })
  await stored(evt.id)
  // a later second than the first delivery's, so the signature is a fresh one
  await eventually(() => Math.floor(Date.now() / 1000) > Number(first!.headers['webhook-timestamp']), 'a later second', undefined, 50)
  const r = await ob.request('POST', `/v1/webhooks/${wh.id}/replay`, { key, body: { event_id: evt.id } })
  assert.equal(r.status, 202)
  assert.equal(r.body.event_id, evt.id)
  const [, again] = await rx.waitFor(2, { path: '/replay' })
  assert.equal(idOf(again!), evt.id)
  assert.deepEqual(again!.rawBody, first!.rawBody, 'the same envelope')
  assert.equal(again!.headers['webhook-id'], evt.id)
  assert.notEqual(again!.headers['x-service-signature'], first!.headers['x-service-signature'])
  assert.equal(verifySignature(again!.rawBody, again!.headers['x-service-signature'] as string, wh.secret).ok, true)
  new Webhook(wh.secret).verify(again!.rawBody.toString('utf8'), {
    'webhook-id': again!.headers['webhook-id'] as string,
    'webhook-timestamp': again!.headers['webhook-timestamp'] as string,
    'webhook-signature': again!.headers['webhook-signature'] as string
  })
  await eventually(async () => {
    const deliveries = (await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })).body.data
    return deliveries.filter((d: { event_id: string }) => d.event_id === evt.id).length === 2
  }, 'both attempts logged')

  // A retry with the same Idempotency-Key answers the same and sends nothing more.
  const headers = { 'idempotency-key': `replay-${evt.id}` }
  assert.equal((await ob.request('POST', `/v1/webhooks/${wh.id}/replay`, { key, body: { event_id: evt.id }, headers })).status, 202)
  const retried = await ob.request('POST', `/v1/webhooks/${wh.id}/replay`, { key, body: { event_id: evt.id }, headers })
  assert.equal(retried.status, 202)
  assert.equal(retried.headers.get('idempotent-replayed'), 'true')
  await rx.waitFor(3, { path: '/replay' })
  await nothingHappensFor(1500) // a fourth request would be here by now
  assert.equal(rx.on('/replay').length, 3)
})

test('replay and recover refuse another organisation\'s webhook or event (403), sending nothing, ' +
  'an unknown event (404) and bad input', async () => {
  rx.script = () => ({ status: 200 })
  const mine = await putWebhook(ob, org, { url: rx.url('/mine'), events: ['delivered'] })
  const other = await ob.org()
  const theirs = await putWebhook(ob, other, { url: rx.url('/theirs'), events: ['delivered'] })
  const theirEvent = await publishEvent(ob, other, 'delivered')
  await rx.waitFor(1, { path: '/theirs' })
  const otherKey = await ob.key(other, ['read'])
  await eventually(async () => {
    const events = (await ob.request('GET', '/v1/events?limit=100', { key: otherKey })).body.data
    return events.some((e: { id: string }) => e.id === theirEvent.id)
  }, 'other event stored')

  // Another organisation's event is refused, not sent: the event's owner key tells it from an unknown id.
  const event = await ob.request('POST', `/v1/webhooks/${mine.id}/replay`, { key, body: { event_id: theirEvent.id } })
  assert.equal(event.status, 403)
  assert.equal(event.body.error.code, 'forbidden')
  const hook = await ob.request('POST', `/v1/webhooks/${theirs.id}/replay`, { key, body: { event_id: theirEvent.id } })
  assert.equal(hook.status, 403)
  const recover = await ob.request('POST', `/v1/webhooks/${theirs.id}/recover`, {
    key, body: { since: new Date(Date.now() - 3600_000).toISOString() }
  })
  assert.equal(recover.status, 403)
  assert.equal(recover.body.error.code, 'forbidden')

  const unknown = await ob.request('POST', `/v1/webhooks/${mine.id}/replay`, { key, body: { event_id: 'evt_0000000000000000000000000z' } })
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.error.code, 'not_found')
  for (const body of [{}, { event_id: 'msg_0000000000000000000000000z' }, { event_id: 42 }, { event_id: theirEvent.id, x: 1 }]) {
    const r = await ob.request('POST', `/v1/webhooks/${mine.id}/replay`, { key, body })
    assert.equal(r.status, 400, JSON.stringify(body))
  }
  for (const body of [{}, { since: 'yesterday' }, { since: '2026-13-01T00:00:00Z' }, { since: 1700000000 }]) {
    const r = await ob.request('POST', `/v1/webhooks/${mine.id}/recover`, { key, body })
    assert.equal(r.status, 400, JSON.stringify(body))
    assert.equal(r.body.error.code, 'validation_error')
  }
  await nothingHappensFor(1500) // anything the refused calls had sent would be here by now
  assert.equal(rx.on('/theirs').length, 1, 'nothing sent to the other organisation\'s webhook')
  assert.equal(rx.on('/mine').length, 0, 'nothing sent for another organisation\'s event')
  assert.equal(webhookNow(ob, theirs)?.secret, theirs.secret)
})

test('recover sends exactly the events the webhook did not receive, with their ids, once however often it is called', async () => {
  const since = new Date(Date.now() - 1000).toISOString()
  let down = false
  rx.script = (req) => ({ status: req.path === '/recover' && down ? 500 : 200 })
  const wh = await putWebhook(ob, org, { url: rx.url('/recover'), events: ['delivered', 'bounced'] })
  const received = await publishEvent(ob, org, 'delivered')
  await rx.waitFor(1, { path: '/recover' })
  await publishEvent(ob, org, 'opened') // not subscribed: never recovered

  // The receiver answers 500: two events fail their attempt and their retry, and the webhook fails.
  down = true
  const failed1 = await publishEvent(ob, org, 'delivered')
  const failed2 = await publishEvent(ob, org, 'bounced')
  await eventually(() => webhookNow(ob, wh)?.status === 'failed', 'webhook failed')
  // While it is failed, events are not delivered to it.
  const whileFailed = await publishEvent(ob, org, 'delivered')
  await sleep(500)
  down = false
  await setWebhookStatus(ob, wh, 'active')
  const after = await publishEvent(ob, org, 'delivered')
  await eventually(() => ids('/recover').includes(after.id), 'event after revival delivered')
  const missed = [failed1.id, failed2.id, whileFailed.id].sort()
  for (const id of [...missed, after.id]) await stored(id)
  // The received event is recorded as such once its attempt is logged.
  await eventually(async () => {
    const deliveries = (await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })).body.data
    return deliveries.some((d: { event_id: string, error: null | string }) => d.event_id === after.id && d.error === null)
  }, 'success logged')
  await sleep(100)
  const before = rx.on('/recover').length

  // Two recovers at once (a client retrying) queue each missed event once between them.
  const [a, b] = await Promise.all([
    ob.request('POST', `/v1/webhooks/${wh.id}/recover`, { key, body: { since } }),
    ob.request('POST', `/v1/webhooks/${wh.id}/recover`, { key, body: { since } })
  ])
  assert.equal(a.status, 202)
  assert.equal(b.status, 202)
  assert.equal(a.body.events + b.body.events, 3)
  await rx.waitFor(before + 3, { path: '/recover' })
  await nothingHappensFor(1500) // an event queued twice would be here a second time by now
  const resent = rx.on('/recover').slice(before)
  assert.deepEqual(resent.map(idOf).sort(), missed)
  for (const r of resent) assert.equal(r.headers['webhook-id'], idOf(r))

  // Once they were received, a later recover finds nothing left; an Idempotency-Key retry answers the same.
  await eventually(async () => {
    const deliveries = (await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })).body.data
    const recovered = deliveries.filter((d: { event_id: string, error: null | string }) => missed.includes(d.event_id) && d.error === null)
    return recovered.length === 3
  }, 'recovered deliveries logged')
  await sleep(100)
  const headers = { 'idempotency-key': `recover-${wh.id}` }
  const again = await ob.request('POST', `/v1/webhooks/${wh.id}/recover`, { key, body: { since }, headers })
  assert.deepEqual([again.status, again.body], [202, { events: 0 }])
  const replayed = await ob.request('POST', `/v1/webhooks/${wh.id}/recover`, { key, body: { since }, headers })
  assert.equal(replayed.headers.get('idempotent-replayed'), 'true')
  await nothingHappensFor(1000) // anything the later recovers sent would be here by now
  assert.equal(rx.on('/recover').length, before + 3)
  assert.equal(ids('/recover').filter((id) => id === received.id).length, 1)
})

test('recover of a paused webhook is 409 conflict; a time in the future recovers nothing', async () => {
  const wh = await putWebhook(ob, org, { url: rx.url('/paused'), events: ['delivered'] })
  await setWebhookStatus(ob, wh, 'paused')
  const r = await ob.request('POST', `/v1/webhooks/${wh.id}/recover`, { key, body: { since: new Date(Date.now() - 60_000).toISOString() } })
  assert.equal(r.status, 409)
  assert.equal(r.body.error.code, 'conflict')
  await setWebhookStatus(ob, wh, 'active')
  const future = await ob.request('POST', `/v1/webhooks/${wh.id}/recover`, {
    key, body: { since: new Date(Date.now() + 3600_000).toISOString() }
  })
  assert.deepEqual([future.status, future.body], [202, { events: 0 }])
})
