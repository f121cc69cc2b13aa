import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'
import { connectNats } from '../../../stores/clients/mod.ts'
import { ControlPlane } from '../../../stores/control_plane/mod.ts'
import { egressPoolOf } from '../../../protocol/mod.ts'
import type { NatsConnection } from '@nats-io/transport-node'

/**
 * The operator's egress API: sources and pools with their checks, assignments of organisations and domains, limit
 * overrides; every change shows in the control-plane mirror of another process, and is one line of the security log.
 */
let ob: TestOutbox
let org: TestOrg
let key: string
let nc: NatsConnection
let other: ControlPlane
let keyId: string
const logs: string[] = []
before(async () => {
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({ log: { level: 'info', stream } })
  org = await ob.org()
  const made = await ob.proc.cp.operatorKeys.create('egress')
  key = made.value
  keyId = made.record.id
  nc = await connectNats([ob.nats.url], 'test-other-process')
  other = await ControlPlane.open(nc, { replicas: 1 })
})
after(async () => {
  other.close()
  await nc.drain()
  await ob.close()
})

const call = async (method: string, path: string, body?: unknown): ReturnType<TestOutbox['request']> =>
  await ob.request(method, `/v1/operator${path}`, { key, ...(body !== undefined ? { body } : {}) })

function assertError (res: Awaited<ReturnType<typeof call>>, status: number, code: string): void {
  assert.equal(res.status, status, res.text)
  assert.equal(res.body.error.code, code, res.text)
  assert.equal(typeof res.body.error.request_id, 'string')
}

test('sources: add, read, change, list; bad addresses, host names and names are 400 naming each field', async () => {
  const made = await call('POST', '/egress/sources', { name: 'mta1', address: '192.0.2.10', ehlo: 'mta1.example.com', warmup: {} })
  assert.equal(made.status, 201, made.text)
  assert.equal(made.body.address, '192.0.2.10')
  assert.equal(typeof made.body.warmup.started_at, 'string')
  assertError(await call('POST', '/egress/sources', { name: 'mta1', address: '192.0.2.11', ehlo: 'mta1.example.com' }), 409, 'conflict')
  const bad = await call('POST', '/egress/sources', { name: 'mta9', address: '192.0.2.300', ehlo: 'not a host' })
  assertError(bad, 400, 'validation_error')
  assert.deepEqual(bad.body.error.errors.map((e: { field: string }) => e.field).sort(), ['address', 'ehlo'])
  assertError(await call('POST', '/egress/sources', { name: 'Bad_Name', address: '::1', ehlo: 'a.example.com' }), 400, 'validation_error')
  assertError(await call('POST', '/egress/sources', { name: 'z', address: 'fe80::1%eth0', ehlo: 'a.example.com' }), 400, 'validation_error')
  const v6 = await call('POST', '/egress/sources', { name: 'mta6', address: '2001:db8::10', ehlo: 'mta6.example.com' })
  assert.equal(v6.status, 201, v6.text)

  const changed = await call('PATCH', '/egress/sources/mta1', { ehlo: 'out1.example.com', warmup: null })
  assert.equal(changed.status, 200, changed.text)
  assert.equal(changed.body.ehlo, 'out1.example.com')
  assert.equal(changed.body.warmup, undefined)
  assertError(await call('PATCH', '/egress/sources/mta1', {}), 400, 'validation_error')
  assertError(await call('PATCH', '/egress/sources/nope', { ehlo: 'a.example.com' }), 404, 'not_found')
  assertError(await call('GET', '/egress/sources/..%2Fpool.x'), 404, 'not_found')
  assertError(await call('GET', '/egress/sources/UPPER'), 404, 'not_found')
  assert.equal((await call('GET', '/egress/sources/mta6')).body.address, '2001:db8::10')
  assert.deepEqual((await call('GET', '/egress/sources')).body.data.map((s: { name: string }) => s.name), ['mta1', 'mta6'])
  await eventually(() => other.egress.source('mta1')?.ehlo === 'out1.example.com', 'the change in another process\'s mirror')
})

test('pools: sources must exist (422), weights 1..100, PUT is idempotent; default always exists', async () => {
  await call('POST', '/egress/sources', { name: 'p1', address: '192.0.2.21', ehlo: 'p1.example.com' })
  await call('POST', '/egress/sources', { name: 'p2', address: '192.0.2.22', ehlo: 'p2.example.com' })
  const unknown = await call('PUT', '/egress/pools/bulk', { sources: [{ source: 'p1' }, { source: 'ghost' }] })
  assertError(unknown, 422, 'unprocessable')
  assert.deepEqual(unknown.body.error.details.unknown_sources, ['ghost'])
  assertError(await call('PUT', '/egress/pools/bulk', { sources: [{ source: 'p1', weight: 101 }] }), 400, 'validation_error')
  assertError(await call('PUT', '/egress/pools/bulk', { sources: [] }), 400, 'validation_error')
  assertError(await call('PUT', '/egress/pools/bulk', { sources: [{ source: 'p1' }, { source: 'p1' }] }), 400, 'validation_error')

  const put = await call('PUT', '/egress/pools/bulk', { sources: [{ source: 'p1', weight: 80 }, { source: 'p2', weight: 20 }] })
  assert.equal(put.status, 200, put.text)
  const again = await call('PUT', '/egress/pools/bulk', { sources: [{ source: 'p1', weight: 80 }, { source: 'p2', weight: 20 }] })
  assert.deepEqual(again.body, put.body, 'the same PUT changes nothing, updated_at included')
  assertError(await call('POST', '/egress/pools', { name: 'bulk', sources: [{ source: 'p1' }] }), 409, 'conflict')
  const created = await call('POST', '/egress/pools', { name: 'solo', sources: [{ source: 'p2' }] })
  assert.equal(created.status, 201, created.text)
  assert.deepEqual(created.body.sources, [{ source: 'p2', weight: 100 }])

  const def = await call('GET', '/egress/pools/default')
  assert.deepEqual(def.body, { name: 'default', sources: [], implicit: true })
  assertError(await call('GET', '/egress/pools/none-such'), 404, 'not_found')
  const names = (await call('GET', '/egress/pools')).body.data.map((p: { name: string }) => p.name)
  assert.deepEqual(names, ['bulk', 'default', 'solo'])
  await eventually(() => other.egress.pool('bulk')?.sources.length === 2, 'the pool in another process\'s mirror')
  assert.equal(other.egress.pool('default')?.sources.length, 0)
})

test('deleting a source takes it out of its pools first; the last source of a pool is refused', async () => {
  await call('POST', '/egress/sources', { name: 'd1', address: '192.0.2.31', ehlo: 'd1.example.com' })
  await call('POST', '/egress/sources', { name: 'd2', address: '192.0.2.32', ehlo: 'd2.example.com' })
  await call('PUT', '/egress/pools/two', { sources: [{ source: 'd1' }, { source: 'd2' }] })
  await call('PUT', '/egress/pools/only-d2', { sources: [{ source: 'd2' }] })
  const last = await call('DELETE', '/egress/sources/d2')
  assertError(last, 409, 'egress_source_in_use')
  assert.deepEqual(last.body.error.details.pools, ['only-d2'])
  const removed = await call('DELETE', '/egress/sources/d1')
  assert.equal(removed.status, 200, removed.text)
  assert.deepEqual(removed.body, { name: 'd1', removed_from_pools: ['two'] })
  assert.deepEqual((await call('GET', '/egress/pools/two')).body.sources, [{ source: 'd2', weight: 100 }])
  assertError(await call('GET', '/egress/sources/d1'), 404, 'not_found')
  assertError(await call('DELETE', '/egress/sources/d1'), 404, 'not_found')
})

test('assignments: an unknown pool is 422, a domain of another organisation 404; the mirror resolves the pool', async () => {
  await call('POST', '/egress/sources', { name: 'a1', address: '192.0.2.41', ehlo: 'a1.example.com' })
  await call('PUT', '/egress/pools/org-pool', { sources: [{ source: 'a1' }] })
  await call('PUT', '/egress/pools/dom-pool', { sources: [{ source: 'a1' }] })
  assertError(await call('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: 'ghost' }), 422, 'unprocessable')
  assertError(await call('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: 'Bad Name' }), 400, 'validation_error')
  assertError(await call('PUT', '/organizations/org_00000000000000000000000000/egress-pool', { pool: 'org-pool' }), 404, 'not_found')

  const o = await call('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: 'org-pool' })
  assert.deepEqual(o.body, { organization_id: org.orgId, egress_pool: 'org-pool' })
  const d = await call('PUT', `/organizations/${org.orgId}/domains/${org.domainId}/egress-pool`, { pool: 'dom-pool' })
  assert.deepEqual(d.body, { organization_id: org.orgId, domain_id: org.domainId, egress_pool: 'dom-pool', effective_pool: 'dom-pool' })
  const again = await call('PUT', `/organizations/${org.orgId}/domains/${org.domainId}/egress-pool`, { pool: 'dom-pool' })
  assert.deepEqual(again.body, d.body)

  const stranger = await ob.org()
  const theirs = await call('PUT', `/organizations/${org.orgId}/domains/${stranger.domainId}/egress-pool`, { pool: 'dom-pool' })
  assertError(theirs, 404, 'not_found')
  assertError(await call('PUT', `/organizations/${org.orgId}/domains/not-an-id/egress-pool`, { pool: 'dom-pool' }), 404, 'not_found')

  await eventually(() => {
    const orgRec = other.orgs.get(org.orgId)
    const domain = other.domain(org.orgId, org.domainId)
    return orgRec !== undefined && domain !== undefined && egressPoolOf(orgRec, domain) === 'dom-pool'
  }, 'the assignment in another process\'s mirror')

  const inUse = await call('DELETE', '/egress/pools/org-pool')
  assertError(inUse, 409, 'egress_pool_in_use')
  assert.deepEqual(inUse.body.error.details.organizations, [org.orgId])
  assert.equal(inUse.body.error.details.organization_count, 1)
  const domInUse = await call('DELETE', '/egress/pools/dom-pool')
  assertError(domInUse, 409, 'egress_pool_in_use')
  assert.deepEqual(domInUse.body.error.details.domains, [{ id: org.domainId, organization_id: org.orgId }])

  const cleared = await call('PUT', `/organizations/${org.orgId}/domains/${org.domainId}/egress-pool`, { pool: null })
  assert.deepEqual(cleared.body, { organization_id: org.orgId, domain_id: org.domainId, egress_pool: null, effective_pool: 'org-pool' })
  assert.equal((await call('DELETE', '/egress/pools/dom-pool')).status, 204)
  const back = await call('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: null })
  assert.deepEqual(back.body, { organization_id: org.orgId, egress_pool: 'default' })
  assert.equal((await call('DELETE', '/egress/pools/org-pool')).status, 204)
  await eventually(() => other.orgs.get(org.orgId)?.egress_pool === undefined && other.egress.pool('org-pool') === undefined,
    'the removal in another process\'s mirror')
})

test('limit overrides: validated, replaced whole, idempotent, mirrored', async () => {
  assert.deepEqual((await call('GET', '/egress/limits')).body, { limits: {} })
  // nothing stored yet and nothing to store: the empty overrides, not an error
  assert.deepEqual((await call('PUT', '/egress/limits', { limits: {} })).body, { limits: {} })
  const bad = await call('PUT', '/egress/limits', { limits: { google: { maxConnections: 0, tls: 'always' }, 'Bad Key': {} } })
  assertError(bad, 400, 'validation_error')
  assertError(await call('PUT', '/egress/limits', { limits: { google: { messagesPerMinute: 2_000_000 } } }), 400, 'validation_error')
  const limits = { default: { maxConnections: 10 }, google: { maxConnections: 5, messagesPerMinute: 600, tls: 'required' } }
  const put = await call('PUT', '/egress/limits', { limits })
  assert.equal(put.status, 200, put.text)
  assert.deepEqual(put.body, { limits })
  assert.deepEqual((await call('PUT', '/egress/limits', { limits })).body, { limits })
  await eventually(() => other.egress.settings().limits?.google?.tls === 'required', 'the overrides in another process\'s mirror')
  assert.deepEqual((await call('PUT', '/egress/limits', { limits: {} })).body, { limits: {} })
})

test('a source\'s own limit overrides: validated, replaced whole, shown with the source, mirrored, logged with its name', async () => {
  assert.equal((await call('POST', '/egress/sources', { name: 'own1', address: '192.0.2.61', ehlo: 'own1.example.com' })).status, 201)
  assert.deepEqual((await call('GET', '/egress/sources/own1/limits')).body, { source: 'own1', limits: {} })
  assertError(await call('GET', '/egress/sources/ghost/limits'), 404, 'not_found')
  assertError(await call('PUT', '/egress/sources/ghost/limits', { limits: {} }), 404, 'not_found')
  assertError(await call('PUT', '/egress/sources/own1/limits', { limits: { gmail: { maxConnections: 1 } } }), 400, 'validation_error')
  assertError(await call('PUT', '/egress/sources/own1/limits', { limits: { google: { maxConnections: 0 } } }), 400, 'validation_error')
  const limits = { google: { maxConnections: 1, messagesPerMinute: 60 }, default: { tls: 'required' } }
  const put = await call('PUT', '/egress/sources/own1/limits', { limits })
  assert.equal(put.status, 200, put.text)
  assert.deepEqual(put.body, { source: 'own1', limits })
  assert.deepEqual((await call('GET', '/egress/sources/own1')).body.limits, limits)
  await eventually(() => other.egress.source('own1')?.limits?.google?.maxConnections === 1, 'the overrides in another process\'s mirror')
  // a change of the source keeps its overrides; `{}` removes them
  assert.deepEqual((await call('PATCH', '/egress/sources/own1', { ehlo: 'own1b.example.com' })).body.limits, limits)
  const cleared = await call('PUT', '/egress/sources/own1/limits', { limits: {} })
  assert.deepEqual(cleared.body, { source: 'own1', limits: {} })
  assert.equal('limits' in (await call('GET', '/egress/sources/own1')).body, false)
  const line = await eventually(() => logs.flatMap((l) => l.split('\n')).filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, any>)
    .find((l) => l.event === 'operator.egress_changed' && l.change === 'limits.set' && l.name === 'own1'), 'the security line')
  assert.equal(line.operator_key_id, keyId)
  // kept with the source: a source made again under the name starts without them
  await call('PUT', '/egress/sources/own1/limits', { limits })
  assert.equal((await call('DELETE', '/egress/sources/own1')).status, 200)
  assert.equal((await call('POST', '/egress/sources', { name: 'own1', address: '192.0.2.61', ehlo: 'own1.example.com' })).status, 201)
  assert.deepEqual((await call('GET', '/egress/sources/own1/limits')).body, { source: 'own1', limits: {} })
  assert.equal((await call('DELETE', '/egress/sources/own1')).status, 200)
})

test('every change is one security line naming the operator key and what changed; no key value is logged', async () => {
  const changes = (): Array<Record<string, any>> => logs.flatMap((l) => l.split('\n')).filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, any>).filter((l) => l.kind === 'security' && l.event === 'operator.egress_changed')
  const earlier = changes().length
  await call('POST', '/egress/sources', { name: 'log1', address: '192.0.2.51', ehlo: 'log1.example.com' })
  await call('PUT', '/egress/pools/logged', { sources: [{ source: 'log1' }] })
  await call('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: 'logged' })
  await call('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: null })
  const lines = await eventually(() => {
    const found = changes().slice(earlier)
    return found.length >= 4 ? found : undefined
  }, 'the security lines of the changes')
  const pick = (l: Record<string, any>): Record<string, unknown> =>
    Object.fromEntries(['change', 'operator_key_id', 'name', 'org_id', 'pool'].filter((k) => k in l).map((k) => [k, l[k]]))
  assert.deepEqual(lines.map(pick), [
    { change: 'source.created', operator_key_id: keyId, name: 'log1' },
    { change: 'pool.set', operator_key_id: keyId, name: 'logged' },
    { change: 'organization.pool_assigned', operator_key_id: keyId, org_id: org.orgId, pool: 'logged' },
    { change: 'organization.pool_assigned', operator_key_id: keyId, org_id: org.orgId, pool: null }
  ])
  assert.ok(!logs.join('').includes(key), 'the operator key value is never logged')
})
