import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
})
after(async () => { await ob.close() })

async function newKey (permissions: string[] = ['read']): Promise<{ id: string, key: string }> {
  const r = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'rotating', domain_id: org.domainId, permissions }
  })
  assert.equal(r.status, 201)
  return r.body
}

const works = async (key: string): Promise<number> => (await ob.request('GET', '/v1/suppressions', { key })).status

test('rotation with a grace period: both keys work, the old one carries expires_at', async () => {
  const old = await newKey()
  const before = Date.now()
  const r = await ob.request('POST', `/v1/api-keys/${old.id}/rotate`, { key: org.adminKey, body: { grace_period_minutes: 60 } })
  assert.equal(r.status, 201)
  assert.match(r.body.id, /^key_/)
  assert.notEqual(r.body.id, old.id)
  assert.equal(r.body.replaces, old.id)
  assert.match(r.body.key, /^ob_live_/)
  const expires = Date.parse(r.body.old_key_expires_at)
  assert.ok(expires >= before + 59 * 60_000 && expires <= Date.now() + 61 * 60_000)
  assert.equal(await works(old.key), 200)
  assert.equal(await works(r.body.key), 200)
  const listed = await ob.request('GET', `/v1/api-keys/${old.id}`, { key: org.adminKey })
  assert.equal(listed.body.expires_at, r.body.old_key_expires_at)
  assert.equal(listed.body.replaced_by, r.body.id)
  const fresh = await ob.request('GET', `/v1/api-keys/${r.body.id}`, { key: org.adminKey })
  assert.deepEqual(fresh.body.permissions, ['read'])
  assert.equal(fresh.body.name, 'rotating')
})

test('grace_period_minutes 0 revokes the old key at once', async () => {
  const old = await newKey()
  const r = await ob.request('POST', `/v1/api-keys/${old.id}/rotate`, { key: org.adminKey, body: { grace_period_minutes: 0 } })
  assert.equal(r.status, 201)
  const refused = await ob.request('GET', '/v1/suppressions', { key: old.key })
  assert.equal(refused.status, 401)
  assert.equal(refused.body.error.code, 'unauthorized')
  assert.equal(await works(r.body.key), 200)
})

test('an old key whose grace period has ended is 401', async () => {
  const old = await newKey()
  const r = await ob.request('POST', `/v1/api-keys/${old.id}/rotate`, { key: org.adminKey, body: { grace_period_minutes: 10 } })
  assert.equal(await works(old.key), 200)
  // Move the end of the grace period into the past, as the clock would after ten minutes.
  const record = ob.proc.cp.apiKeys.get(old.id)!
  await ob.proc.cp.apiKeys.put(old.id, { ...record, expires_at: new Date(Date.now() - 1000).toISOString() })
  const refused = await ob.request('GET', '/v1/suppressions', { key: old.key })
  assert.equal(refused.status, 401)
  assert.equal(refused.body.error.code, 'unauthorized')
  assert.equal(await works(r.body.key), 200)
})

test('a key can only be rotated once, and a revoked key not at all (409)', async () => {
  const old = await newKey()
  assert.equal((await ob.request('POST', `/v1/api-keys/${old.id}/rotate`, {
    key: org.adminKey, body: { grace_period_minutes: 5 }
  })).status, 201)
  const again = await ob.request('POST', `/v1/api-keys/${old.id}/rotate`, { key: org.adminKey, body: { grace_period_minutes: 5 } })
  assert.equal(again.status, 409)
  assert.equal(again.body.error.code, 'conflict')
  const other = await newKey()
  assert.equal((await ob.request('DELETE', `/v1/api-keys/${other.id}`, { key: org.adminKey })).status, 204)
  const revoked = await ob.request('POST', `/v1/api-keys/${other.id}/rotate`, { key: org.adminKey, body: { grace_period_minutes: 5 } })
  assert.equal(revoked.status, 409)
})

test('grace_period_minutes is required and must be 0..10080', async () => {
  const old = await newKey()
  for (const body of [
    {}, { grace_period_minutes: -1 }, { grace_period_minutes: 10081 }, { grace_period_minutes: 1.5 }, { grace_period_minutes: '5' }
  ]) {
    const r = await ob.request('POST', `/v1/api-keys/${old.id}/rotate`, { key: org.adminKey, body })
    assert.equal(r.status, 400, JSON.stringify(body))
    assert.equal(r.body.error.errors[0].field, 'grace_period_minutes')
  }
  assert.equal((await ob.request('POST', `/v1/api-keys/${old.id}/rotate`, {
    key: org.adminKey, body: { grace_period_minutes: 10080 }
  })).status, 201)
})

test('a key may rotate itself and keep working until its grace ends', async () => {
  const self = await newKey(['manage'])
  const r = await ob.request('POST', `/v1/api-keys/${self.id}/rotate`, { key: self.key, body: { grace_period_minutes: 1 } })
  assert.equal(r.status, 201)
  assert.equal((await ob.request('GET', '/v1/api-keys', { key: self.key })).status, 200)
  assert.equal((await ob.request('GET', '/v1/api-keys', { key: r.body.key })).status, 200)
})

test('DELETE revokes: 204, then the key is 401; a second DELETE is 204 and keeps revoked_at', async () => {
  const k = await newKey()
  assert.equal(await works(k.key), 200)
  const del = await ob.request('DELETE', `/v1/api-keys/${k.id}`, { key: org.adminKey })
  assert.equal(del.status, 204)
  assert.equal(del.text, '')
  const refused = await ob.request('GET', '/v1/suppressions', { key: k.key })
  assert.equal(refused.status, 401)
  const first = (await ob.request('GET', `/v1/api-keys/${k.id}`, { key: org.adminKey })).body.revoked_at
  assert.ok(!Number.isNaN(Date.parse(first)))
  assert.equal((await ob.request('DELETE', `/v1/api-keys/${k.id}`, { key: org.adminKey })).status, 204)
  assert.equal((await ob.request('GET', `/v1/api-keys/${k.id}`, { key: org.adminKey })).body.revoked_at, first)
})
