import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstream } from '@nats-io/jetstream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa, type ReceivedRequest } from '../../helpers/https_receiver.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { eventSubject, newId, MAX_WEBHOOK_FILTER_TAGS, type EventRecord } from '../../../protocol/mod.ts'

/**
 * Webhooks that filter by tag, sending domain and environment, against real sends (live through an SMTP sink, sandbox
 * with an `ob_test_` key): each receives exactly the events its filters pass, and every envelope says its environment.
 */
/** After an unfiltered webhook has every event, a filtered one's request for any of them would be in by then. */
const SETTLE_MS = 1500

let sink: SmtpSink
let rx: HttpsReceiver
let ob: TestOutbox
let org: TestOrg
let liveKey: string
let sandboxKey: string
before(async () => {
  sink = await SmtpSink.start({ keepRaw: false })
  rx = await HttpsReceiver.start()
  ob = await TestOutbox.start({
    env: {
      OB_SMTP_RELAY: sink.url, OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1'
    }
  })
  org = await ob.org()
  liveKey = await ob.key(org, ['send'])
  sandboxKey = await ob.key(org, ['send'], 'test')
})
after(async () => { await ob.close(); await rx.close(); await sink.close() })

interface Envelope { id: string, type: string, environment: string, data: { message_id: string, tags?: string[] } }
const envelope = (r: ReceivedRequest): Envelope => JSON.parse(r.rawBody.toString('utf8')) as Envelope
const messagesAt = (path: string): string[] => rx.on(path).map((r) => envelope(r).data.message_id).sort()

/** Creates a webhook for `delivered` events with these filters; `stored`: the filters as the answer shows them. */
async function createWebhook (path: string, filters?: Record<string, unknown>, stored = filters ?? {}): Promise<string> {
  const r = await ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: rx.url(path), events: ['delivered'], ...(filters !== undefined ? { filters } : {}) }
  })
  assert.equal(r.status, 201, r.text)
  assert.deepEqual(r.body.filters, stored)
  return r.body.id as string
}

async function send (key: string, tags?: string[]): Promise<string> {
  const r = await ob.request('POST', '/v1/messages/send', {
    key,
    body: {
      from: `App <hello@${org.domain}>`, to: 'user@example.net', subject: 'Hi', text: 'Hi', ...(tags !== undefined ? { tags } : {})
    }
  })
  assert.equal(r.status, 202, r.text)
  return r.body.id as string
}

/** Waits until the unfiltered webhook at `allPath` has the delivered event of every message, then a moment more. */
async function allFannedOut (allPath: string, ids: string[]): Promise<void> {
  await eventually(() => ids.every((id) => messagesAt(allPath).includes(id)), `every delivered event at ${allPath}`)
  await nothingHappensFor(SETTLE_MS)
}

test('a webhook filtered by tags receives only events of messages with one of them', async () => {
  await createWebhook('/tags-all')
  await createWebhook('/tags-receipt', { tags: ['receipt', 'invoice'] })
  const untagged = await send(liveKey)
  const other = await send(liveKey, ['newsletter'])
  const receipt = await send(liveKey, ['welcome', 'receipt'])
  const invoice = await send(liveKey, ['invoice'])
  await allFannedOut('/tags-all', [untagged, other, receipt, invoice])
  assert.deepEqual(messagesAt('/tags-receipt'), [receipt, invoice].sort(), 'tagged receipt or invoice only')
  for (const r of rx.on('/tags-receipt')) assert.equal(envelope(r).environment, 'live')
})

test('a webhook filtered by sending domain receives only events of mail from that domain', async () => {
  const second = `second-${org.domain}`
  const added = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: second } })
  assert.equal(added.status, 201, added.text)
  await createWebhook('/domain-all')
  await createWebhook('/domain-own', { domains: [org.domain.toUpperCase()] }, { domains: [org.domain] })
  await createWebhook('/domain-second', { domains: [second] })
  const sent = await send(liveKey)
  // An event about mail from the second domain, as the engine publishes it (the record names its sending domain).
  const record: EventRecord = {
    id: newId('evt'), type: 'delivered', timestamp: new Date().toISOString(), org_id: org.orgId, message_id: 'msg_second',
    data: { message_id: 'msg_second', to: 'user@example.net' }, domain: second
  }
  await jetstream(ob.proc.nc).publish(eventSubject(org.orgId, 'delivered'), JSON.stringify(record), { msgID: record.id })
  await allFannedOut('/domain-all', [sent, 'msg_second'])
  assert.deepEqual(messagesAt('/domain-own'), [sent], 'names are matched case-insensitively')
  assert.deepEqual(messagesAt('/domain-second'), ['msg_second'])
})

test('a sandbox send reaches only the webhooks that take test events, with environment "test"; a live one the others', async () => {
  await createWebhook('/env-all')
  await createWebhook('/env-live', { environment: 'live' })
  await createWebhook('/env-test', { environment: 'test' })
  const sandbox = await send(sandboxKey)
  const live = await send(liveKey)
  await allFannedOut('/env-all', [sandbox, live])
  assert.deepEqual(messagesAt('/env-test'), [sandbox])
  assert.deepEqual(messagesAt('/env-live'), [live])
  assert.equal(envelope(rx.on('/env-test')[0]!).environment, 'test')
  assert.equal(envelope(rx.on('/env-live')[0]!).environment, 'live')
  const both = new Map(rx.on('/env-all').map((r) => [envelope(r).data.message_id, envelope(r).environment]))
  assert.deepEqual([both.get(sandbox), both.get(live)], ['test', 'live'])
  // Every key of the envelope, in order.
  assert.deepEqual(Object.keys(JSON.parse(rx.on('/env-test')[0]!.rawBody.toString())), ['id', 'type', 'timestamp', 'environment', 'data'])
})

test('filters combine: every kind must match, any value within one', async () => {
  await createWebhook('/and-all')
  await createWebhook('/and', { tags: ['a', 'b'], domains: [org.domain], environment: 'test' })
  const liveTagged = await send(liveKey, ['a'])
  const sandboxUntagged = await send(sandboxKey)
  const sandboxTagged = await send(sandboxKey, ['b'])
  await allFannedOut('/and-all', [liveTagged, sandboxUntagged, sandboxTagged])
  assert.deepEqual(messagesAt('/and'), [sandboxTagged])
})

test('PATCH replaces the filters whole; {} removes them', async () => {
  const id = await createWebhook('/patched', { tags: ['x'], environment: 'live' })
  const narrowed = await ob.request('PATCH', `/v1/webhooks/${id}`, { key: org.adminKey, body: { filters: { tags: ['y', 'y'] } } })
  assert.equal(narrowed.status, 200, narrowed.text)
  assert.deepEqual(narrowed.body.filters, { tags: ['y'] })
  const cleared = await ob.request('PATCH', `/v1/webhooks/${id}`, { key: org.adminKey, body: { filters: { environment: 'all' } } })
  assert.deepEqual(cleared.body.filters, {})
  assert.deepEqual((await ob.request('GET', `/v1/webhooks/${id}`, { key: org.adminKey })).body.filters, {})
})

test('a recover queues only the missed events that pass the filters, each with its environment', async () => {
  const created = await ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: rx.url('/recovered'), events: ['delivered'], filters: { tags: ['r'], environment: 'live' } }
  })
  assert.equal(created.status, 201, created.text)
  const id = created.body.id as string
  assert.equal((await ob.request('PATCH', `/v1/webhooks/${id}`, { key: org.adminKey, body: { status: 'paused' } })).status, 200)
  const sent = [await send(liveKey, ['r']), await send(sandboxKey, ['r']), await send(liveKey)]
  const readKey = await ob.key(org, ['read'])
  for (const m of sent) {
    await eventually(async () => (await ob.request('GET', `/v1/events?message_id=${m}`, { key: readKey })).body.data
      .some((e: { type: string }) => e.type === 'delivered'), `the delivered event of ${m} in the read model`)
  }
  assert.equal((await ob.request('PATCH', `/v1/webhooks/${id}`, { key: org.adminKey, body: { status: 'active' } })).status, 200)
  const since = new Date(Date.parse(created.body.created_at as string) - 1000).toISOString()
  const recovered = await ob.request('POST', `/v1/webhooks/${id}/recover`, { key: org.adminKey, body: { since } })
  assert.equal(recovered.status, 202, recovered.text)
  assert.equal(recovered.body.events, 1, 'the live tagged message only')
  const [r] = await rx.waitFor(1, { path: '/recovered' })
  assert.equal(envelope(r!).data.message_id, sent[0])
  assert.equal(envelope(r!).environment, 'live')
  // A replay sends whatever the filters: the sandbox event, with its environment.
  const sandboxEvent = (await ob.request('GET', `/v1/events?message_id=${sent[1]!}`, { key: readKey })).body.data
    .find((e: { type: string }) => e.type === 'delivered') as { id: string }
  const replayed = await ob.request('POST', `/v1/webhooks/${id}/replay`, { key: org.adminKey, body: { event_id: sandboxEvent.id } })
  assert.equal(replayed.status, 202, replayed.text)
  const [, again] = await rx.waitFor(2, { path: '/recovered' })
  assert.deepEqual([envelope(again!).id, envelope(again!).environment], [sandboxEvent.id, 'test'])
})

test('invalid filters are 400 naming the field, an unknown stream 422; a foreign webhook is 403, an unknown one 404', async () => {
  const other = await ob.org()
  const post = async (filters: unknown): Promise<{ status: number, body: any }> =>
    await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: rx.url('/bad'), events: ['delivered'], filters } })
  const unknown = await post({ domains: ['nowhere.example'] })
  assert.equal(unknown.status, 400)
  assert.equal(unknown.body.error.code, 'validation_error')
  assert.equal(unknown.body.error.field, 'filters.domains[0]')
  // Another organisation's domain reads exactly like one nobody has.
  const foreign = await post({ domains: [org.domain, other.domain] })
  assert.equal(foreign.status, 400)
  assert.equal(foreign.body.error.field, 'filters.domains[1]')
  assert.equal(foreign.body.error.message, `filters.domains[1]: ${other.domain} is not a domain of this organisation`)
  const tooMany = await post({ tags: Array.from({ length: MAX_WEBHOOK_FILTER_TAGS + 1 }, (_, i) => `t${i}`) })
  assert.equal(tooMany.status, 400)
  assert.match(JSON.stringify(tooMany.body.error), /filters\/tags|filters\.tags/)
  for (const filters of [{ tags: ['no spaces'] }, { environment: 'prod' }, { streams: ['Not A Stream'] }, { tags: [] }]) {
    const r = await post(filters)
    assert.equal(r.status, 400, JSON.stringify(filters))
    assert.equal(r.body.error.code, 'validation_error')
  }
  // a well-formed stream id the organisation does not have: the 422 of every read filtering by a stream
  const noStream = await post({ streams: ['transactional', 'broadcast'] })
  assert.equal(noStream.status, 422, JSON.stringify(noStream.body))
  assert.deepEqual([noStream.body.error.code, noStream.body.error.field, noStream.body.error.message],
    ['stream_not_found', 'filters.streams[1]', 'broadcast is not a message stream of this organisation'])
  const listed = (await ob.request('GET', '/v1/webhooks', { key: org.adminKey })).body.data as Array<{ url: string }>
  assert.equal(listed.some((w) => w.url.endsWith('/bad')), false, 'nothing was created')
  const theirs = await ob.request('POST', '/v1/webhooks', { key: other.adminKey, body: { url: rx.url('/theirs'), events: ['delivered'] } })
  assert.equal(theirs.status, 201)
  const patchTheirs = await ob.request('PATCH', `/v1/webhooks/${theirs.body.id}`, { key: org.adminKey, body: { url: rx.url('/stolen') } })
  assert.equal(patchTheirs.status, 403)
  assert.equal(patchTheirs.body.error.code, 'forbidden')
  const after = await ob.request('GET', `/v1/webhooks/${theirs.body.id}`, { key: other.adminKey })
  assert.equal(after.body.url, rx.url('/theirs'), 'unchanged')
  const missing = await ob.request('PATCH', `/v1/webhooks/${newId('wh')}`, { key: org.adminKey, body: { url: rx.url('/x') } })
  assert.equal(missing.status, 404)
})
