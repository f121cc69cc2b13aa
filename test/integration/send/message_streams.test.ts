import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { HttpsReceiver, testCa, type ReceivedRequest } from '../../helpers/https_receiver.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { queuedId, startSubmissionScenario, submissionClient, type SubmissionScenario } from '../../helpers/submission.ts'
import type { TestOrg } from '../../helpers/outbox.ts'

/**
 * Message streams against real servers: one Outbox (all roles) relaying to an SMTP sink, with SMTP submission, and
 * one HTTPS receiver for webhooks. Streams are made through the API, mail goes out through the sink, and
 * suppressions come from a real one-click unsubscribe and a real hard bounce.
 */
let s: SubmissionScenario
let rx: HttpsReceiver
let org: TestOrg
let sendKey: string
let n = 0

before(async () => {
  rx = await HttpsReceiver.start()
  s = await startSubmissionScenario({ OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true' })
  org = s.org
  sendKey = await s.ob.key(org, ['send'])
  const r = await s.ob.request('POST', '/v1/streams', {
    key: org.adminKey, body: { id: 'news', name: 'Newsletter', description: 'Monthly news' }
  })
  assert.equal(r.status, 201, r.text)
})
after(async () => {
  await s.close()
  await rx.close()
})

/** A fresh recipient at the sink: `prefix` chooses the sink's answer (`permfail…` is a 550 5.1.1). */
const rcpt = (prefix = 'user'): string => `${prefix}${++n}@dest.example`

async function send (to: string, stream?: string): Promise<{ status: number, body: any, text: string }> {
  return await s.ob.request('POST', '/v1/messages/send', {
    key: sendKey,
    body: { from: `App <app@${org.domain}>`, to, subject: 'Hi', text: 'Hello', ...(stream !== undefined ? { stream } : {}) }
  })
}

async function sent (to: string, stream?: string): Promise<string> {
  const r = await send(to, stream)
  assert.equal(r.status, 202, r.text)
  return r.body.id as string
}

async function messageStatus (id: string, status: string): Promise<any> {
  return await eventually(async () => {
    const r = await s.ob.request('GET', `/v1/messages/${id}`, { key: org.adminKey })
    return r.body?.status === status ? r.body : undefined
  }, `message ${id} ${status}`)
}

test('streams: transactional always listed, broadcast streams made, changed and deleted; another organisation sees none', async () => {
  const list = await s.ob.request('GET', '/v1/streams', { key: org.adminKey })
  assert.equal(list.status, 200, list.text)
  assert.deepEqual(list.body.data.map((x: any) => [x.id, x.type]), [['transactional', 'transactional'], ['news', 'broadcast']])
  assert.equal(list.body.data[1].description, 'Monthly news')

  const dup = await s.ob.request('POST', '/v1/streams', { key: org.adminKey, body: { id: 'news', name: 'Again' } })
  assert.equal(dup.status, 409, dup.text)
  const tx = await s.ob.request('POST', '/v1/streams', { key: org.adminKey, body: { id: 'transactional', name: 'Mine' } })
  assert.equal(tx.status, 409, tx.text)
  const bad = await s.ob.request('POST', '/v1/streams', { key: org.adminKey, body: { id: 'Bad Id', name: 'x' } })
  assert.equal(bad.status, 400, bad.text)
  const readOnly = await s.ob.request('POST', '/v1/streams', { key: await s.ob.key(org, ['read']), body: { id: 'promo', name: 'x' } })
  assert.equal(readOnly.status, 403, readOnly.text)

  const made = await s.ob.request('POST', '/v1/streams', { key: org.adminKey, body: { id: 'promo', name: 'Promotions' } })
  assert.equal(made.status, 201, made.text)
  const changed = await s.ob.request('PATCH', '/v1/streams/promo', { key: org.adminKey, body: { description: 'Offers' } })
  assert.equal(changed.status, 200, changed.text)
  assert.equal(changed.body.description, 'Offers')
  assert.equal(changed.body.name, 'Promotions')

  const other = await s.ob.org()
  for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'x' }], ['DELETE', undefined]] as const) {
    const r = await s.ob.request(method, '/v1/streams/promo', { key: other.adminKey, ...(body !== undefined ? { body } : {}) })
    assert.equal(r.status, 404, `${method}: ${r.text}`)
    assert.equal(r.body.error.code, 'not_found')
  }
  const otherList = await s.ob.request('GET', '/v1/streams', { key: other.adminKey })
  assert.deepEqual(otherList.body.data.map((x: any) => x.id), ['transactional'])
  const otherSend = await s.ob.request('POST', '/v1/messages/send', {
    key: other.adminKey, body: { from: `a@${other.domain}`, to: rcpt(), subject: 'x', text: 'x', stream: 'promo' }
  })
  assert.equal(otherSend.status, 422, otherSend.text)
  assert.equal(otherSend.body.error.code, 'stream_not_found')

  const keep = await s.ob.request('DELETE', '/v1/streams/transactional', { key: org.adminKey })
  assert.equal(keep.status, 422, keep.text)
  const rename = await s.ob.request('PATCH', '/v1/streams/transactional', { key: org.adminKey, body: { name: 'Mine' } })
  assert.equal(rename.status, 422, rename.text)
  const audit = await s.ob.request('GET', '/v1/audit-log?action=stream.created', { key: org.adminKey })
  assert.ok(audit.body.data.some((e: any) => e.target === 'promo'), audit.text)
  const del = await s.ob.request('DELETE', '/v1/streams/promo', { key: org.adminKey })
  assert.equal(del.status, 204, del.text)
  assert.equal((await s.ob.request('GET', '/v1/streams/promo', { key: org.adminKey })).status, 404)
  const gone = await send(rcpt(), 'promo')
  assert.equal(gone.status, 422, gone.text)
  assert.equal(gone.body.error.code, 'stream_not_found')
  assert.equal(gone.body.error.field, 'stream')
})

test('broadcast mail carries one-click unsubscribe; its unsubscribe suppresses that stream only', async () => {
  const to = rcpt()
  const id = await sent(to, 'news')
  await s.sink.until(() => s.sink.to(to).length === 1)
  const head = s.sink.to(to)[0]!.headers
  assert.equal(head.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click')
  const link = /<(https?:\/\/[^>]+\/t\/u\/[^>]+)>/.exec(head.get('list-unsubscribe') ?? '')
  assert.ok(link !== null, 'an https unsubscribe link')
  const delivered = await messageStatus(id, 'delivered')
  assert.equal(delivered.stream, 'news')
  assert.equal(delivered.events.find((e: any) => e.type === 'delivered').data.stream, 'news')

  const path = new URL(link[1]!).pathname
  const one = await s.ob.request('POST', path, {
    rawBody: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' }
  })
  assert.equal(one.status, 200, one.text)
  const entry = await eventually(async () => {
    const r = await s.ob.request('GET', `/v1/suppressions?stream=news&email=${encodeURIComponent(to)}`, { key: org.adminKey })
    return r.body?.data?.[0]
  }, 'the stream suppression')
  assert.equal(entry.reason, 'unsubscribe')
  assert.equal(entry.stream, 'news')
  const transactionalList = await s.ob.request('GET', `/v1/suppressions?stream=transactional&email=${encodeURIComponent(to)}`,
    { key: org.adminKey })
  assert.deepEqual(transactionalList.body.data, [], 'a broadcast unsubscribe is not listed for transactional')

  const again = await send(to, 'news')
  assert.equal(again.status, 422, again.text)
  assert.equal(again.body.error.code, 'recipient_suppressed')
  const tx = await sent(to)
  await messageStatus(tx, 'delivered')
  assert.equal(s.sink.to(to).length, 2, 'the transactional message was delivered')

  const batch = await s.ob.request('POST', '/v1/messages/batch', {
    key: sendKey,
    body: {
      messages: [
        { from: `app@${org.domain}`, to, subject: 'x', text: 'x', stream: 'news' },
        { from: `app@${org.domain}`, to, subject: 'x', text: 'x' }
      ]
    }
  })
  assert.equal(batch.status, 202, batch.text)
  assert.deepEqual(batch.body.data.map((m: any) => m.status), ['suppressed', 'queued'], 'each item on its own stream')
  const bad = await s.ob.request('POST', '/v1/messages/batch', {
    key: sendKey, body: { messages: [{ from: `app@${org.domain}`, to, subject: 'x', text: 'x', stream: 'nope' }] }
  })
  assert.equal(bad.status, 422, bad.text)
  assert.equal(bad.body.error.field, 'messages[0].stream')

  const removed = await s.ob.request('DELETE', `/v1/suppressions/${encodeURIComponent(to)}?stream=news`, { key: org.adminKey })
  assert.equal(removed.status, 204, removed.text)
  assert.equal((await send(to, 'news')).status, 202, 'sendable on news again')
})

test('a hard bounce on a broadcast stream suppresses the address on every stream', async () => {
  const to = rcpt('permfail')
  const id = await sent(to, 'news')
  const bounced = await messageStatus(id, 'bounced')
  assert.equal(bounced.events.find((e: any) => e.type === 'bounced').data.stream, 'news')
  const entry = await eventually(async () => {
    const r = await s.ob.request('GET', `/v1/suppressions?email=${encodeURIComponent(to)}`, { key: org.adminKey })
    return r.body?.data?.[0]
  }, 'the suppression')
  assert.equal(entry.reason, 'hard_bounce')
  assert.equal(entry.stream, undefined)
  for (const stream of ['transactional', 'news']) {
    const r = await send(to, stream)
    assert.equal(r.status, 422, `${stream}: ${r.text}`)
    assert.equal(r.body.error.code, 'recipient_suppressed')
  }
})

test('messages, events and stats filter by stream; a webhook filtered by stream receives only its events', async () => {
  await s.ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: rx.url('/all'), events: ['delivered'] } })
  const wh = await s.ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: rx.url('/news'), events: ['delivered'], filters: { streams: ['news'] } }
  })
  assert.equal(wh.status, 201, wh.text)
  assert.deepEqual(wh.body.filters, { streams: ['news'] })
  const unknown = await s.ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: rx.url('/x'), events: ['delivered'], filters: { streams: ['nope'] } }
  })
  assert.equal(unknown.status, 422, unknown.text)
  assert.deepEqual([unknown.body.error.code, unknown.body.error.field], ['stream_not_found', 'filters.streams[0]'])

  const news = await sent(rcpt(), 'news')
  const tx = await sent(rcpt())
  const idsAt = (p: string): string[] => rx.on(p).map((r: ReceivedRequest) => JSON.parse(r.rawBody.toString('utf8')).data.message_id)
  await eventually(() => [news, tx].every((id) => idsAt('/all').includes(id)), 'both delivered at the unfiltered webhook')
  await nothingHappensFor(1000)
  // Mail from the tests before may still be delivered after these webhooks exist: judge by stream, not by count.
  assert.ok(idsAt('/news').includes(news), 'the news message reached the filtered webhook')
  assert.ok(!idsAt('/news').includes(tx), 'the transactional message did not')
  for (const r of rx.on('/news')) assert.equal(JSON.parse(r.rawBody.toString('utf8')).data.stream, 'news')

  const msgs = await s.ob.request('GET', '/v1/messages?stream=news', { key: org.adminKey })
  assert.equal(msgs.status, 200, msgs.text)
  assert.ok(msgs.body.data.some((m: any) => m.id === news))
  assert.ok(msgs.body.data.every((m: any) => m.stream === 'news'))
  const txMsgs = await s.ob.request('GET', '/v1/messages?stream=transactional', { key: org.adminKey })
  assert.ok(txMsgs.body.data.some((m: any) => m.id === tx))
  assert.ok(!txMsgs.body.data.some((m: any) => m.id === news))

  const evs = await s.ob.request('GET', '/v1/events?stream=news&type=delivered', { key: org.adminKey })
  assert.equal(evs.status, 200, evs.text)
  assert.ok(evs.body.data.some((e: any) => e.data.message_id === news))
  assert.ok(evs.body.data.every((e: any) => e.data.stream === 'news'))

  const stats = await s.ob.request('GET', '/v1/stats?stream=news', { key: org.adminKey })
  assert.equal(stats.status, 200, stats.text)
  const all = await s.ob.request('GET', '/v1/stats', { key: org.adminKey })
  assert.ok(stats.body.counts.sent >= 1 && stats.body.counts.sent < all.body.counts.sent, JSON.stringify([stats.body, all.body]))
  const both = await s.ob.request('GET', '/v1/stats?stream=news&tag=x', { key: org.adminKey })
  assert.equal(both.status, 400)
})

test('SMTP submission: X-Outbox-Stream chooses the stream and is removed; a key\'s default_stream applies otherwise', async () => {
  const to = rcpt()
  const client = submissionClient(s.port, sendKey)
  const info = await client.sendMail({
    from: `app@${org.domain}`, to, subject: 'News', text: 'Hello', headers: { 'X-Outbox-Stream': 'news' }
  })
  const id = queuedId(info.response)
  await s.sink.until(() => s.sink.to(to).length === 1)
  const head = s.sink.to(to)[0]!.headers
  assert.equal(head.get('x-outbox-stream'), undefined)
  assert.equal(head.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click')
  assert.equal((await messageStatus(id, 'delivered')).stream, 'news')
  await assert.rejects(client.sendMail({
    from: `app@${org.domain}`, to: rcpt(), subject: 'x', text: 'x', headers: { 'X-Outbox-Stream': 'nope' }
  }), (err: any) => err.responseCode === 554)
  client.close()

  const made = await s.ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'news', domain_id: org.domainId, permissions: ['send'], default_stream: 'news' }
  })
  assert.equal(made.status, 201, made.text)
  assert.equal(made.body.default_stream, 'news')
  const byKey = submissionClient(s.port, made.body.key)
  const plain = await byKey.sendMail({ from: `app@${org.domain}`, to: rcpt(), subject: 'x', text: 'x' })
  byKey.close()
  assert.equal((await messageStatus(queuedId(plain.response), 'delivered')).stream, 'news')
  const http = await s.ob.request('POST', '/v1/messages/send', {
    key: made.body.key, body: { from: `app@${org.domain}`, to: rcpt(), subject: 'x', text: 'x' }
  })
  assert.equal(http.status, 202, http.text)
  assert.equal((await messageStatus(http.body.id, 'delivered')).stream, 'news')
  const noStream = await s.ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'x', domain_id: org.domainId, permissions: ['send'], default_stream: 'nope' }
  })
  assert.equal(noStream.status, 422, noStream.text)
})
