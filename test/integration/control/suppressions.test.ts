import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

let ob: TestOutbox
let org: TestOrg
let other: TestOrg
let readKey: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  other = await ob.org()
  readKey = await ob.key(org, ['read'])
  // What the delivery side writes after a hard bounce.
  await ob.proc.cp.suppressions.put(suppressionKey(org.orgId, 'Bounced@Example.com'), {
    org_id: org.orgId, email: 'Bounced@Example.com', reason: 'hard_bounce', message_id: 'msg_00000000000000000000000001',
    created_at: new Date().toISOString()
  })
})
after(async () => { await ob.close() })

test('a read key lists suppressions with reason and message_id', async () => {
  const r = await ob.request('GET', '/v1/suppressions', { key: readKey })
  assert.equal(r.status, 200)
  const entry = r.body.data.find((s: { email: string }) => s.email === 'Bounced@Example.com')
  assert.equal(entry.reason, 'hard_bounce')
  assert.equal(entry.message_id, 'msg_00000000000000000000000001')
  assert.ok(!Number.isNaN(Date.parse(entry.created_at)))
})

test('POST adds a manual suppression (201), again is 200 with the existing entry', async () => {
  const r = await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'Manual@Example.com' } })
  assert.equal(r.status, 201)
  assert.equal(r.body.email, 'manual@example.com')
  assert.equal(r.body.reason, 'manual')
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'MANUAL@example.COM'), true)
  const again = await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'manual@example.com' } })
  assert.equal(again.status, 200)
  assert.equal(again.body.created_at, r.body.created_at)
  const bounced = await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'bounced@example.com' } })
  assert.equal(bounced.status, 200)
  assert.equal(bounced.body.reason, 'hard_bounce')
  const bad = await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'not an address' } })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.errors[0].field, 'email')
  assert.equal((await ob.request('POST', '/v1/suppressions', { key: readKey, body: { email: 'x@example.com' } })).status, 403)
})

test('?email= filters case-insensitively', async () => {
  const r = await ob.request('GET', '/v1/suppressions?email=BOUNCED%40example.COM', { key: readKey })
  assert.equal(r.status, 200)
  assert.equal(r.body.data.length, 1)
  assert.equal(r.body.data[0].email, 'Bounced@Example.com')
  const none = await ob.request('GET', '/v1/suppressions?email=nobody%40example.com', { key: readKey })
  assert.deepEqual(none.body, { data: [], has_more: false, next_cursor: null })
})

test('pages follow the address order without repeats', async () => {
  for (const e of ['c@p.example', 'a@p.example', 'b@p.example']) {
    await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: e } })
  }
  const seen: string[] = []
  let cursor: string | null = null
  do {
    const r = await ob.request('GET', `/v1/suppressions?limit=2${cursor !== null ? `&cursor=${cursor}` : ''}`, { key: readKey })
    assert.equal(r.status, 200)
    seen.push(...r.body.data.map((s: { email: string }) => s.email.toLowerCase()))
    cursor = r.body.has_more === true ? r.body.next_cursor : null
  } while (cursor !== null)
  assert.deepEqual(seen, [...seen].sort())
  assert.equal(new Set(seen).size, seen.length)
  assert.ok(seen.length >= 5)
  assert.equal((await ob.request('GET', '/v1/suppressions?cursor=!!', { key: readKey })).status, 400)
})

test('DELETE removes (case-insensitive) with 204; absent is 404; read keys are 403', async () => {
  await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'gone@example.com' } })
  assert.equal((await ob.request('DELETE', '/v1/suppressions/gone%40example.com', { key: readKey })).status, 403)
  const del = await ob.request('DELETE', '/v1/suppressions/GONE%40Example.com', { key: org.adminKey })
  assert.equal(del.status, 204)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'gone@example.com'), false)
  const again = await ob.request('DELETE', '/v1/suppressions/gone@example.com', { key: org.adminKey })
  assert.equal(again.status, 404)
  assert.equal(again.body.error.code, 'not_found')
})

test('organisations never see or remove each other\'s suppressions', async () => {
  await ob.request('POST', '/v1/suppressions', { key: other.adminKey, body: { email: 'theirs@example.com' } })
  const list = await ob.request('GET', '/v1/suppressions?email=theirs%40example.com', { key: readKey })
  assert.deepEqual(list.body.data, [])
  // Suppressions are addressed by email within the caller's organisation: another org's entry is simply absent.
  assert.equal((await ob.request('DELETE', '/v1/suppressions/theirs%40example.com', { key: org.adminKey })).status, 404)
  assert.equal(ob.proc.cp.isSuppressed(other.orgId, 'theirs@example.com'), true)
})
