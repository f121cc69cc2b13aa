import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Every read filtering by `?stream=` against a real gateway, NATS and Redis: a stream id that is none of the
 * organisation's is 422 `stream_not_found` naming `stream`, the same answer for another organisation's stream id as
 * for one nobody has; the organisation's own streams, `transactional`, and a stream it deleted whose messages or
 * suppressions are still stored are read as before; a malformed id stays a 400.
 */
let ob: TestOutbox
let org: TestOrg
let other: TestOrg

/** The reads that take `?stream=`. */
const READS = ['/v1/messages', '/v1/events', '/v1/stats', '/v1/suppressions', '/v1/suppressions/export']

before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  other = await ob.org()
  for (const [o, id] of [[org, 'news'], [org, 'old'], [org, 'club'], [org, 'gone'], [other, 'promo']] as const) {
    const r = await ob.request('POST', '/v1/streams', { key: o.adminKey, body: { id, name: id } })
    assert.equal(r.status, 201, r.text)
  }
  // `old` keeps a message, `club` a suppression entry of its own, `gone` nothing, once each is deleted
  // (the message is scheduled a day ahead: delivered now, an unroutable test address would bounce while the test runs)
  const scheduledAt = new Date(Date.now() + 86_400_000).toISOString()
  const sent = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey,
    body: {
      from: `App <app@${org.domain}>`, to: 'kept@streams.example', subject: 'Hi', text: 'Hello', scheduled_at: scheduledAt, stream: 'old'
    }
  })
  assert.equal(sent.status, 202, sent.text)
  await eventually(async () => {
    const r = await ob.request('GET', '/v1/messages?stream=old', { key: org.adminKey })
    return r.body?.data?.length === 1 ? true : undefined
  }, 'the message on old in the read model')
  const imported = await ob.request('POST', '/v1/suppressions/import', {
    key: org.adminKey, body: { addresses: [{ email: 'member@streams.example', reason: 'unsubscribe', stream: 'club' }] }
  })
  assert.equal(imported.body.imported, 1, imported.text)
  for (const id of ['old', 'club', 'gone']) {
    const r = await ob.request('DELETE', `/v1/streams/${id}`, { key: org.adminKey })
    assert.equal(r.status, 204, r.text)
  }
})
after(async () => { await ob.close() })

/** The error of an answer without its request id (which differs between any two requests). */
function errorOf (r: { body: any }): Record<string, unknown> {
  const { request_id: _id, ...rest } = r.body.error
  return rest
}

test('a stream id that is none of the organisation\'s is 422 stream_not_found naming stream on every read', async () => {
  for (const path of READS) {
    const none = await ob.request('GET', `${path}?stream=nothing`, { key: org.adminKey })
    assert.equal(none.status, 422, `${path}: ${none.text}`)
    assert.deepEqual(errorOf(none), {
      code: 'stream_not_found', message: 'nothing is not a message stream of this organisation', field: 'stream',
      details: { stream: 'nothing' }
    }, path)
  }
})

test('another organisation\'s stream id answers exactly as one nobody has', async () => {
  for (const path of READS) {
    const theirs = await ob.request('GET', `${path}?stream=promo`, { key: org.adminKey })
    const nobodys = await ob.request('GET', `${path}?stream=prom0`, { key: org.adminKey })
    assert.equal(theirs.status, 422, `${path}: ${theirs.text}`)
    assert.equal(nobodys.status, 422, `${path}: ${nobodys.text}`)
    assert.deepEqual(errorOf(theirs), {
      code: 'stream_not_found', message: 'promo is not a message stream of this organisation', field: 'stream',
      details: { stream: 'promo' }
    }, path)
    assert.deepEqual(JSON.stringify(errorOf(theirs)).replaceAll('promo', 'prom0'), JSON.stringify(errorOf(nobodys)), path)
    assert.equal((await ob.request('GET', `${path}?stream=promo`, { key: other.adminKey })).status, 200, `${path}: its own`)
  }
})

test('the organisation\'s own streams, transactional and a deleted stream with stored history are read; a bad id is 400', async () => {
  for (const path of READS) {
    for (const id of ['news', 'transactional', 'old', 'club']) {
      const r = await ob.request('GET', `${path}?stream=${id}`, { key: org.adminKey })
      assert.equal(r.status, 200, `${path}?stream=${id}: ${r.text}`)
    }
    const gone = await ob.request('GET', `${path}?stream=gone`, { key: org.adminKey })
    assert.equal(gone.status, 422, `${path}: a deleted stream of which nothing is stored: ${gone.text}`)
    assert.equal(gone.body.error.message, 'gone is not a message stream of this organisation')
    const bad = await ob.request('GET', `${path}?stream=Not-A-Stream`, { key: org.adminKey })
    assert.equal(bad.status, 400, `${path}: ${bad.text}`)
    assert.deepEqual([bad.body.error.code, bad.body.error.field], ['validation_error', 'stream'], path)
  }
  const old = await ob.request('GET', '/v1/messages?stream=old', { key: org.adminKey })
  assert.deepEqual(old.body.data.map((m: any) => [m.to, m.stream]), [[['kept@streams.example'], 'old']])
  const club = await ob.request('GET', '/v1/suppressions?stream=club', { key: org.adminKey })
  assert.deepEqual(club.body.data.map((s: any) => [s.email, s.stream]), [['member@streams.example', 'club']])
  const exported = await ob.request('GET', '/v1/suppressions/export?stream=club', { key: org.adminKey })
  assert.match(exported.text, /^member@streams\.example,unsubscribe,[^,]+,,,club$/m)
})

test('the import refuses a hard_bounce naming a broadcast stream; the other reasons may name one', async () => {
  const r = await ob.request('POST', '/v1/suppressions/import', {
    key: org.adminKey,
    rawBody: 'email,reason,stream\nbounced@streams.example,hard_bounce,news\nall@streams.example,hard_bounce,\n' +
      'reader@streams.example,unsubscribe,news\nhand@streams.example,manual,news\ncomplainer@streams.example,complaint,news\n',
    headers: { 'content-type': 'text/csv' }
  })
  assert.equal(r.status, 200, r.text)
  assert.deepEqual(r.body.refused, [
    { line: 2, email: 'bounced@streams.example', reason: 'a hard_bounce applies to every stream; leave stream empty' }
  ])
  assert.deepEqual(r.body.imported_by_reason, { hard_bounce: 1, complaint: 1, unsubscribe: 1, manual: 1 })
  const bounced = await ob.request('GET', '/v1/suppressions?email=bounced%40streams.example', { key: org.adminKey })
  assert.deepEqual(bounced.body.data, [], 'nothing was added for the refused line')
  const all = await ob.request('GET', '/v1/suppressions?email=all%40streams.example', { key: org.adminKey })
  assert.deepEqual(all.body.data.map((s: any) => [s.reason, s.stream]), [['hard_bounce', undefined]])
})
