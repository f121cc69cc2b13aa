import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

/**
 * The suppression export and import with message streams, against a real gateway, NATS and Redis: an entry of one
 * broadcast stream leaves in the export's `stream` column and comes back on its stream, in another organisation
 * or in the same one after a delete; a stream the importing organisation does not have refuses that line only.
 */
let ob: TestOutbox
let org: TestOrg
let copy: TestOrg
let stranger: TestOrg
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  copy = await ob.org()
  stranger = await ob.org()
  for (const [o, id] of [[org, 'news'], [copy, 'news'], [stranger, 'promo']] as const) {
    const r = await ob.request('POST', '/v1/streams', { key: o.adminKey, body: { id, name: id } })
    assert.equal(r.status, 201, r.text)
  }
})
after(async () => { await ob.close() })

const csv = (text: string): { rawBody: string, headers: Record<string, string> } =>
  ({ rawBody: text, headers: { 'content-type': 'text/csv' } })

/**
 * A send judged against the list. It is scheduled a day ahead: delivered now, a message to these unroutable test
 * addresses would bounce, and the engine would add a `hard_bounce` entry for every stream while the test runs.
 */
async function send (o: TestOrg, to: string, stream?: string): Promise<{ status: number, body: any, text: string }> {
  const scheduledAt = new Date(Date.now() + 86_400_000).toISOString()
  return await ob.request('POST', '/v1/messages/send', {
    key: o.adminKey,
    body: {
      from: `App <app@${o.domain}>`, to, subject: 'Hi', text: 'Hello', scheduled_at: scheduledAt,
      ...(stream !== undefined ? { stream } : {})
    }
  })
}

async function assertSuppressedOnNewsOnly (o: TestOrg, to: string): Promise<void> {
  const onNews = await send(o, to, 'news')
  assert.equal(onNews.status, 422, onNews.text)
  assert.equal(onNews.body.error.code, 'recipient_suppressed')
  const onTransactional = await send(o, to)
  assert.equal(onTransactional.status, 202, onTransactional.text)
}

test('the export has a stream column, and importing it restores an entry of one stream on that stream', async () => {
  const added = await ob.request('POST', '/v1/suppressions/import', {
    key: org.adminKey,
    body: { addresses: [{ email: 'reader@streams.example', reason: 'unsubscribe', stream: 'news' }, { email: 'gone@streams.example' }] }
  })
  assert.equal(added.status, 200, added.text)
  assert.equal(added.body.imported, 2, added.text)
  await assertSuppressedOnNewsOnly(org, 'reader@streams.example')

  const exported = await ob.request('GET', '/v1/suppressions/export', { key: org.adminKey })
  assert.equal(exported.status, 200, exported.text)
  const [header, ...rows] = exported.text.trimEnd().split('\n')
  assert.equal(header, 'email,reason,created_at,expires_at,message_id,stream')
  assert.equal(rows.length, 2)
  assert.match(rows[0]!, /^gone@streams\.example,manual,[^,]+,,,$/, 'an entry of every stream: the column is empty')
  assert.match(rows[1]!, /^reader@streams\.example,unsubscribe,[^,]+,,,news$/)

  // into another organisation that has a `news` stream
  const back = await ob.request('POST', '/v1/suppressions/import', { key: copy.adminKey, ...csv(exported.text) })
  assert.equal(back.status, 200, back.text)
  assert.deepEqual([back.body.imported, back.body.refused_count], [2, 0], back.text)
  await assertSuppressedOnNewsOnly(copy, 'reader@streams.example')
  const listed = await ob.request('GET', '/v1/suppressions?email=reader%40streams.example', { key: copy.adminKey })
  assert.deepEqual(listed.body.data.map((s: any) => [s.reason, s.stream]), [['unsubscribe', 'news']])

  // into the same organisation after the entry was deleted
  const removed = await ob.request('DELETE', '/v1/suppressions/reader%40streams.example?stream=news', { key: org.adminKey })
  assert.equal(removed.status, 204, removed.text)
  const entry = await ob.request('GET', '/v1/audit-log?action=suppression.removed', { key: org.adminKey })
  assert.deepEqual(entry.body.data.map((e: any) => [e.target, e.changes]), [['reader@streams.example', { stream: 'news' }]])
  assert.equal((await send(org, 'reader@streams.example', 'news')).status, 202)
  const again = await ob.request('POST', '/v1/suppressions/import', { key: org.adminKey, ...csv(exported.text) })
  assert.deepEqual([again.body.imported, again.body.already_suppressed], [1, 1], again.text)
  await assertSuppressedOnNewsOnly(org, 'reader@streams.example')

  // an export made before the column existed imports as it did: every entry for every stream
  const old = await ob.request('POST', '/v1/suppressions/import', {
    key: copy.adminKey,
    ...csv('email,reason,created_at,expires_at,message_id\nolder@streams.example,unsubscribe,2026-11-01T00:00:00.000Z,,\n')
  })
  assert.equal(old.body.imported, 1, old.text)
  assert.equal((await send(copy, 'older@streams.example')).status, 422)
})

test('a line naming a stream the organisation does not have is refused in the report, the others are imported', async () => {
  const exported = await ob.request('GET', '/v1/suppressions/export', { key: org.adminKey })
  // this organisation has no `news`, and `promo` is another organisation's
  const none = await ob.org()
  const r = await ob.request('POST', '/v1/suppressions/import', { key: none.adminKey, ...csv(exported.text) })
  assert.equal(r.status, 200, r.text)
  assert.equal(r.body.imported, 1, r.text)
  assert.deepEqual(r.body.refused, [
    { line: 3, email: 'reader@streams.example', reason: 'stream news is not a message stream of this organisation' }
  ])
  const json = await ob.request('POST', '/v1/suppressions/import', {
    key: org.adminKey,
    body: { addresses: [{ email: 'x@streams.example', stream: 'promo' }, { email: 'y@streams.example', stream: 'Promo!' }] }
  })
  assert.equal(json.status, 200, json.text)
  assert.deepEqual(json.body.refused, [
    { line: 1, email: 'x@streams.example', reason: 'stream promo is not a message stream of this organisation' },
    { line: 2, email: 'y@streams.example', reason: 'stream must be a stream id: 1 to 40 lower-case letters, digits and dashes' }
  ])
  assert.equal(json.body.imported, 0)
  assert.equal((await send(stranger, 'x@streams.example', 'promo')).status, 202, 'the other organisation\'s stream is untouched')
})
