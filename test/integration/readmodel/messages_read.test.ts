import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { queue } from './fixtures.ts'

let ob: TestOutbox
let org: TestOrg
let readKey: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  readKey = await ob.key(org, ['read'])
})
after(async () => { await ob.close() })

test('a queued message appears in GET /v1/messages and GET /v1/messages/{id}', async () => {
  const msg = await queue(ob, org, { subject: 'Receipt', to: ['Ann <Ann@Example.net>'], metadata: { order: '7' } })
  const list = await ob.request('GET', '/v1/messages', { key: readKey })
  assert.equal(list.status, 200)
  const item = list.body.data.find((m: { id: string }) => m.id === msg.id)
  assert.ok(item, 'listed')
  assert.equal(item.status, 'queued')
  assert.equal(item.subject, 'Receipt')
  assert.equal(list.body.has_more, false)
  assert.equal(list.body.next_cursor, null)

  const one = await ob.request('GET', `/v1/messages/${msg.id}`, { key: readKey })
  assert.equal(one.status, 200)
  assert.deepEqual(
    {
      id: one.body.id, from: one.body.from, to: one.body.to, subject: one.body.subject, status: one.body.status,
      created_at: one.body.created_at, metadata: one.body.metadata, events: one.body.events
    },
    {
      id: msg.id, from: msg.from, to: ['Ann <Ann@Example.net>'], subject: 'Receipt', status: 'queued',
      created_at: msg.created_at, metadata: { order: '7' }, events: []
    }
  )
  assert.equal(one.body.org_id, undefined, 'internal fields stay internal')
})

test('a scheduled message shows status scheduled', async () => {
  const msg = await queue(ob, org, { scheduled_at: new Date(Date.now() + 3600_000).toISOString() }, 'scheduled')
  const one = await ob.request('GET', `/v1/messages/${msg.id}`, { key: readKey })
  assert.equal(one.body.status, 'scheduled')
  assert.equal(one.body.scheduled_at, msg.scheduled_at)
})

test('unknown message id is 404, another organisation\'s message is 403', async () => {
  const unknown = await ob.request('GET', '/v1/messages/msg_00000000000000000000000000', { key: readKey })
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.error.code, 'not_found')

  const other = await ob.org()
  const theirs = await queue(ob, other)
  const r = await ob.request('GET', `/v1/messages/${theirs.id}`, { key: readKey })
  assert.equal(r.status, 403)
  assert.equal(r.body.error.code, 'forbidden')
  const list = await ob.request('GET', '/v1/messages', { key: readKey })
  assert.ok(!list.body.data.some((m: { id: string }) => m.id === theirs.id), 'not listed to another org')
})

test('reading needs the read permission; admin also may', async () => {
  const sendOnly = await ob.key(org, ['send'])
  const r = await ob.request('GET', '/v1/messages', { key: sendOnly })
  assert.equal(r.status, 403)
  assert.equal(r.body.error.code, 'forbidden')
  const admin = await ob.request('GET', '/v1/messages', { key: org.adminKey })
  assert.equal(admin.status, 200)
  const none = await ob.request('GET', '/v1/messages')
  assert.equal(none.status, 401)
})

test('bad query parameters are 400 validation_error naming the field', async () => {
  const cases: Array<[string, string]> = [
    ['/v1/messages?limit=0', 'limit'],
    ['/v1/messages?limit=101', 'limit'],
    ['/v1/messages?limit=abc', 'limit'],
    ['/v1/messages?status=lost', 'status'],
    [`/v1/messages?to=${'a'.repeat(321)}`, 'to'],
    ['/v1/messages?cursor=garbage', 'cursor'],
    ['/v1/events?type=nope', 'type'],
    ['/v1/events?message_id=x', 'message_id'],
    ['/v1/stats?from=yesterday', 'from'],
    ['/v1/stats?to=2024-13-45T00:00:00Z', 'to'],
    ['/v1/stats?interval=week', 'interval']
  ]
  for (const [path, field] of cases) {
    const r = await ob.request('GET', path, { key: readKey })
    assert.equal(r.status, 400, path)
    assert.equal(r.body.error.code, 'validation_error', path)
    assert.ok(r.body.error.errors.some((e: { field: string }) => e.field === field),
      `${path} names ${field}: ${JSON.stringify(r.body.error.errors)}`)
  }
})

test('the event stream path answers a plain GET with 400, not 404', async () => {
  const r = await ob.request('GET', '/v1/events/stream', { key: readKey })
  assert.equal(r.status, 400)
  assert.equal(r.body.error.code, 'validation_error')
})
