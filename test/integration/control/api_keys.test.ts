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

test('creating a key returns its value once, 201, and the key works', async () => {
  const r = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'ci', domain_id: org.domainId, permissions: ['send', 'read'] }
  })
  assert.equal(r.status, 201)
  assert.match(r.body.id, /^key_[0-9a-z]{26}$/)
  assert.equal(r.body.name, 'ci')
  assert.equal(r.body.domain_id, org.domainId)
  assert.deepEqual(r.body.permissions, ['send', 'read'])
  assert.equal(r.body.environment, 'live')
  assert.match(r.body.key, /^ob_live_[A-Za-z0-9]{32}$/)
  assert.equal(r.body.prefix, r.body.key.slice(0, 12))
  assert.ok(!Number.isNaN(Date.parse(r.body.created_at)))
  assert.deepEqual(Object.keys(r.body).sort(), ['created_at', 'domain_id', 'environment', 'id', 'key', 'name', 'permissions', 'prefix'])
  // The new key authenticates: it may read suppressions, and lacks manage.
  assert.equal((await ob.request('GET', '/v1/suppressions', { key: r.body.key })).status, 200)
  assert.equal((await ob.request('GET', '/v1/api-keys', { key: r.body.key })).status, 403)
})

test('a test-environment key starts with ob_test_', async () => {
  const r = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'sandbox', domain_id: org.domainId, permissions: ['send'], environment: 'test' }
  })
  assert.equal(r.status, 201)
  assert.equal(r.body.environment, 'test')
  assert.match(r.body.key, /^ob_test_/)
})

test('the value and its hash are stored nowhere but as a hash, and lists never show them', async () => {
  const made = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'listed', domain_id: org.domainId, permissions: ['read'] }
  })
  const stored = ob.proc.cp.apiKeys.get(made.body.id)!
  assert.equal(JSON.stringify(stored).includes(made.body.key), false)
  assert.match(stored.hash, /^[0-9a-f]{64}$/)
  const list = await ob.request('GET', '/v1/api-keys?limit=100', { key: org.adminKey })
  assert.equal(list.status, 200)
  assert.equal(list.text.includes(made.body.key), false)
  assert.equal(list.text.includes(stored.hash), false)
  const item = list.body.data.find((k: { id: string }) => k.id === made.body.id)
  assert.equal(item.prefix, made.body.key.slice(0, 12))
  assert.equal(item.last4, made.body.key.slice(-4))
  assert.equal(item.key, undefined)
  const one = await ob.request('GET', `/v1/api-keys/${made.body.id}`, { key: org.adminKey })
  assert.equal(one.status, 200)
  assert.equal(one.body.last4, made.body.key.slice(-4))
})

test('lists are paginated by id and only show the caller\'s organisation', async () => {
  for (let i = 0; i < 3; i++) {
    await ob.request('POST', '/v1/api-keys', { key: org.adminKey, body: { name: `p${i}`, domain_id: org.domainId, permissions: ['read'] } })
  }
  const seen: string[] = []
  let cursor: string | null = null
  do {
    const r = await ob.request('GET', `/v1/api-keys?limit=2${cursor !== null ? `&cursor=${cursor}` : ''}`, { key: org.adminKey })
    assert.equal(r.status, 200)
    assert.ok(r.body.data.length <= 2)
    seen.push(...r.body.data.map((k: { id: string }) => k.id))
    cursor = r.body.has_more === true ? r.body.next_cursor : null
  } while (cursor !== null)
  assert.deepEqual(seen, [...seen].sort())
  assert.equal(new Set(seen).size, seen.length)
  assert.ok(seen.length >= 5)
  const otherIds = new Set(ob.proc.cp.apiKeys.list('key_').filter((k) => k.org_id === other.orgId).map((k) => k.id))
  assert.ok(seen.every((id) => !otherIds.has(id)))
  const bad = await ob.request('GET', '/v1/api-keys?limit=500', { key: org.adminKey })
  assert.equal(bad.status, 400)
  assert.equal(bad.body.error.errors[0].field, 'limit')
})

test('validation lists every bad field', async () => {
  const r = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: '', permissions: ['root'], environment: 'prod', extra: 1 }
  })
  assert.equal(r.status, 400)
  assert.equal(r.body.error.code, 'validation_error')
  const fields = r.body.error.errors.map((e: { field: string }) => e.field).sort()
  assert.deepEqual(fields, ['domain_id', 'environment', 'extra', 'name', 'permissions[0]'])
  const empty = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'x', domain_id: org.domainId, permissions: [] }
  })
  assert.equal(empty.status, 400)
  assert.equal(empty.body.error.errors[0].field, 'permissions')
})

test('domain_id must be a domain of the caller\'s organisation: unknown 404, another org\'s 403', async () => {
  const unknown = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'x', domain_id: 'dom_00000000000000000000000000', permissions: ['send'] }
  })
  assert.equal(unknown.status, 404)
  assert.equal(unknown.body.error.code, 'not_found')
  const foreign = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'x', domain_id: other.domainId, permissions: ['send'] }
  })
  assert.equal(foreign.status, 403)
  assert.equal(foreign.body.error.code, 'forbidden')
})

test('a manage key may not create or rotate into permissions it does not hold', async () => {
  const manage = await ob.key(org, ['manage'])
  const admin = await ob.request('POST', '/v1/api-keys', {
    key: manage, body: { name: 'x', domain_id: org.domainId, permissions: ['admin'] }
  })
  assert.equal(admin.status, 403)
  assert.equal(admin.body.error.code, 'forbidden')
  assert.deepEqual(admin.body.error.details.missing, ['admin'])
  const send = await ob.request('POST', '/v1/api-keys', {
    key: manage, body: { name: 'x', domain_id: org.domainId, permissions: ['manage', 'send'] }
  })
  assert.equal(send.status, 403)
  const same = await ob.request('POST', '/v1/api-keys', {
    key: manage, body: { name: 'x', domain_id: org.domainId, permissions: ['manage'] }
  })
  assert.equal(same.status, 201)
  const adminId = ob.proc.cp.apiKeys.getBy('hash', ob.proc.cp.keyByValue(org.adminKey)!.hash)!.id
  const rotate = await ob.request('POST', `/v1/api-keys/${adminId}/rotate`, { key: manage, body: { grace_period_minutes: 5 } })
  assert.equal(rotate.status, 403)
  const revoke = await ob.request('DELETE', `/v1/api-keys/${adminId}`, { key: manage })
  assert.equal(revoke.status, 403)
  // The admin key still works.
  assert.equal((await ob.request('GET', '/v1/billing', { key: org.adminKey })).status, 200)
})

test('a sandbox (ob_test_) key never creates a live key nor rotates one into a new live value (403); ' +
  'its own environment it may', async () => {
  const sandbox = await ob.key(org, ['manage', 'send', 'read'], 'test')
  const liveCount = (): number => ob.proc.cp.apiKeys.list('key_').filter((k) => k.org_id === org.orgId && k.environment === 'live').length
  const before = liveCount()
  for (const body of [
    { name: 'x', domain_id: org.domainId, permissions: ['send'] },
    { name: 'x', domain_id: org.domainId, permissions: ['send'], environment: 'live' }
  ]) {
    const r = await ob.request('POST', '/v1/api-keys', { key: sandbox, body })
    assert.equal(r.status, 403, JSON.stringify(body))
    assert.equal(r.body.error.code, 'forbidden')
    assert.equal(r.body.key, undefined)
  }
  const live = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'live-send', domain_id: org.domainId, permissions: ['send'] }
  })
  const rotate = await ob.request('POST', `/v1/api-keys/${live.body.id}/rotate`, { key: sandbox, body: { grace_period_minutes: 0 } })
  assert.equal(rotate.status, 403)
  assert.equal(rotate.body.error.code, 'forbidden')
  assert.equal(liveCount(), before + 1, 'only the admin\'s live key was made')
  assert.equal(ob.proc.cp.apiKeys.get(live.body.id)?.replaced_by, undefined, 'the live key is not rotated')
  assert.equal((await ob.request('GET', '/v1/suppressions', { key: live.body.key })).status, 403,
    'the live key still authenticates (and lacks read)')

  const own = await ob.request('POST', '/v1/api-keys', {
    key: sandbox, body: { name: 'sb', domain_id: org.domainId, permissions: ['send'], environment: 'test' }
  })
  assert.equal(own.status, 201)
  assert.match(own.body.key, /^ob_test_/)
  const rotated = await ob.request('POST', `/v1/api-keys/${own.body.id}/rotate`, { key: sandbox, body: { grace_period_minutes: 0 } })
  assert.equal(rotated.status, 201)
  assert.match(rotated.body.key, /^ob_test_/)
})

test('keys of another organisation are 403, unknown ids 404', async () => {
  const theirs = await ob.request('POST', '/v1/api-keys', {
    key: other.adminKey, body: { name: 'theirs', domain_id: other.domainId, permissions: ['read'] }
  })
  for (const [method, path, body] of [
    ['GET', `/v1/api-keys/${theirs.body.id}`, undefined],
    ['DELETE', `/v1/api-keys/${theirs.body.id}`, undefined],
    ['POST', `/v1/api-keys/${theirs.body.id}/rotate`, { grace_period_minutes: 1 }]
  ] as const) {
    const r = await ob.request(method, path, { key: org.adminKey, ...(body !== undefined ? { body } : {}) })
    assert.equal(r.status, 403, `${method} ${path}`)
    assert.equal(r.body.error.code, 'forbidden')
  }
  assert.equal((await ob.request('GET', '/v1/suppressions', { key: theirs.body.key })).status, 200)
  for (const [method, path] of [['GET', '/v1/api-keys/key_00000000000000000000000000'], ['DELETE', '/v1/api-keys/nope']] as const) {
    const r = await ob.request(method, path, { key: org.adminKey })
    assert.equal(r.status, 404, `${method} ${path}`)
    assert.equal(r.body.error.code, 'not_found')
  }
})
