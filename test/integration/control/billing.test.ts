import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox } from '../../helpers/outbox.ts'

let ob: TestOutbox
let operatorKey: string
before(async () => {
  ob = await TestOutbox.start({ env: { OB_ENTERPRISE_RATE_LIMIT: '4321' } })
  operatorKey = (await ob.proc.cp.operatorKeys.create('billing')).value
})
after(async () => { await ob.close() })

test('GET /v1/billing shows the plan and its per-key limit', async () => {
  const org = await ob.org('starter')
  const r = await ob.request('GET', '/v1/billing', { key: org.adminKey })
  assert.equal(r.status, 200)
  assert.deepEqual(r.body, { plan: 'starter', rate_limit_per_minute: 300 })
  assert.equal(r.headers.get('ratelimit-limit'), '300')
})

test('a plan the operator sets changes the RateLimit-Limit of the very next request', async () => {
  const org = await ob.org('free')
  const send = await ob.key(org, ['read'])
  assert.equal((await ob.request('GET', '/v1/suppressions', { key: send })).headers.get('ratelimit-limit'), '60')
  const p = await ob.request('PUT', `/v1/operator/organizations/${org.orgId}/plan`, { key: operatorKey, body: { plan: 'pro' } })
  assert.equal(p.status, 200, p.text)
  assert.equal(p.body.rate_limit_per_minute, 1000)
  const after = await ob.request('GET', '/v1/suppressions', { key: send })
  assert.equal(after.headers.get('ratelimit-limit'), '1000')
  assert.equal(after.headers.get('ratelimit-remaining'), '999')
})

test('enterprise uses the org\'s own limit, else OB_ENTERPRISE_RATE_LIMIT', async () => {
  const org = await ob.org('pro')
  const plan = `/v1/operator/organizations/${org.orgId}/plan`
  await ob.request('PUT', plan, { key: operatorKey, body: { plan: 'enterprise' } })
  const billing = await ob.request('GET', '/v1/billing', { key: org.adminKey })
  assert.deepEqual(billing.body, { plan: 'enterprise', rate_limit_per_minute: 4321 })
  await ob.request('PUT', plan, { key: operatorKey, body: { plan: 'enterprise', rate_limit_per_minute: 20_000 } })
  const g = await ob.request('GET', '/v1/billing', { key: org.adminKey })
  assert.deepEqual(g.body, { plan: 'enterprise', rate_limit_per_minute: 20_000 })
  assert.equal(g.headers.get('ratelimit-limit'), '20000')
})

test('the organisation\'s admin lowers its plan through PATCH /v1/billing; a raise is 403 forbidden', async () => {
  const org = await ob.org('pro')
  const lower = await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan: 'free' } })
  assert.deepEqual(lower.body, { plan: 'free', rate_limit_per_minute: 60 })
  for (const plan of ['starter', 'pro', 'enterprise']) {
    const r = await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan } })
    assert.equal(r.status, 403, plan)
    assert.equal(r.body.error.code, 'forbidden')
  }
  assert.equal(ob.proc.cp.orgs.get(org.orgId)!.plan, 'free')
})

test('validation and permissions: unknown plan 400, manage key 403', async () => {
  const org = await ob.org('pro')
  for (const body of [{ plan: 'platinum' }, {}, { plan: 'free', rate_limit_per_minute: 99999 }]) {
    const r = await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body })
    assert.equal(r.status, 400, JSON.stringify(body))
    assert.equal(r.body.error.code, 'validation_error')
  }
  const manage = await ob.key(org, ['manage', 'read', 'send'])
  for (const [method, body] of [['GET', undefined], ['PATCH', { plan: 'free' }]] as const) {
    const r = await ob.request(method, '/v1/billing', { key: manage, ...(body !== undefined ? { body } : {}) })
    assert.equal(r.status, 403)
    assert.equal(r.body.error.code, 'forbidden')
  }
  assert.equal(ob.proc.cp.orgs.get(org.orgId)!.plan, 'pro')
})
