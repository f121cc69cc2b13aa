import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

let ob: TestOutbox
let org: TestOrg
let other: TestOrg
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
  other = await ob.org()
})
after(async () => { await ob.close() })

const add = async (key: string, match: string, includeAttachments = false): Promise<{ status: number, body: any }> =>
  await ob.request('POST', '/v1/inbound/routes', {
    key, body: { match, action: { type: 'webhook', include_attachments: includeAttachments } }
  })

test('create, read and list a route', async () => {
  const r = await add(org.adminKey, `Support@${org.domain.toUpperCase()}`, true)
  assert.equal(r.status, 201)
  assert.match(r.body.id, /^rt_[0-9a-z]{26}$/)
  assert.equal(r.body.match, `support@${org.domain}`)
  assert.deepEqual(r.body.action, { type: 'webhook', include_attachments: true })
  assert.ok(!Number.isNaN(Date.parse(r.body.created_at)))
  assert.deepEqual((await ob.request('GET', `/v1/inbound/routes/${r.body.id}`, { key: org.adminKey })).body, r.body)
  const list = await ob.request('GET', '/v1/inbound/routes', { key: org.adminKey })
  assert.equal(list.status, 200)
  assert.ok(list.body.data.some((x: { id: string }) => x.id === r.body.id))
  const wildcard = await add(org.adminKey, `*@${org.domain}`)
  assert.equal(wildcard.status, 201)
})

test('the same match twice in one organisation is 409; another organisation may not use its domain (403)', async () => {
  assert.equal((await add(org.adminKey, `dup@${org.domain}`)).status, 201)
  const again = await add(org.adminKey, `DUP@${org.domain}`, true)
  assert.equal(again.status, 409)
  assert.equal(again.body.error.code, 'conflict')
  assert.equal((await add(other.adminKey, `dup@${org.domain}`)).status, 403)
})

test('a deleted route frees its match', async () => {
  const r = await add(org.adminKey, `again@${org.domain}`)
  assert.equal((await ob.request('DELETE', `/v1/inbound/routes/${r.body.id}`, { key: org.adminKey })).status, 204)
  assert.equal((await ob.request('GET', `/v1/inbound/routes/${r.body.id}`, { key: org.adminKey })).status, 404)
  assert.equal((await add(org.adminKey, `again@${org.domain}`)).status, 201)
})

test('validation: bad match, missing or wrong action', async () => {
  const cases: Array<[unknown, string]> = [
    [{ match: 'no-at-sign', action: { type: 'webhook', include_attachments: false } }, 'match'],
    [{ match: 'a@b', action: { type: 'webhook', include_attachments: false } }, 'match'],
    [{ match: 'a b@example.com', action: { type: 'webhook', include_attachments: false } }, 'match'],
    [{ match: 'x@example.com', action: { type: 'forward', include_attachments: false } }, 'action.type'],
    [{ match: 'x@example.com', action: { type: 'webhook' } }, 'action.include_attachments'],
    [{ match: 'x@example.com' }, 'action']
  ]
  for (const [body, field] of cases) {
    const r = await ob.request('POST', '/v1/inbound/routes', { key: org.adminKey, body })
    assert.equal(r.status, 400, JSON.stringify(body))
    assert.equal(r.body.error.code, 'validation_error')
    assert.ok(r.body.error.errors.some((e: { field: string }) => e.field === field),
      `${JSON.stringify(body)} → ${JSON.stringify(r.body.error.errors)}`)
  }
})

test('another organisation\'s route is 403; unknown ids 404', async () => {
  const theirs = (await add(other.adminKey, `theirs@${other.domain}`)).body
  for (const method of ['GET', 'DELETE']) {
    const r = await ob.request(method, `/v1/inbound/routes/${theirs.id}`, { key: org.adminKey })
    assert.equal(r.status, 403, method)
    assert.equal(r.body.error.code, 'forbidden')
  }
  assert.equal((await ob.request('GET', '/v1/inbound/routes/rt_00000000000000000000000000', { key: org.adminKey })).status, 404)
  assert.equal((await ob.request('DELETE', '/v1/inbound/routes/nope', { key: org.adminKey })).status, 404)
})
