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

const create = async (key: string, body: unknown): Promise<{ status: number, body: any }> =>
  await ob.request('POST', '/v1/webhooks', { key, body })

test('creating a webhook: 201, active, secret shown once and never again', async () => {
  const r = await create(org.adminKey, { url: 'https://hooks.example.com/outbox', events: ['delivered', 'bounced', 'inbound'] })
  assert.equal(r.status, 201)
  assert.match(r.body.id, /^wh_[0-9a-z]{26}$/)
  assert.equal(r.body.url, 'https://hooks.example.com/outbox')
  assert.deepEqual(r.body.events, ['delivered', 'bounced', 'inbound'])
  assert.equal(r.body.status, 'active')
  assert.match(r.body.secret, /^whsec_[A-Za-z0-9]{32}$/)
  assert.ok(!Number.isNaN(Date.parse(r.body.created_at)))
  const one = await ob.request('GET', `/v1/webhooks/${r.body.id}`, { key: org.adminKey })
  assert.equal(one.status, 200)
  assert.equal(one.body.secret, undefined)
  assert.equal(one.text.includes(r.body.secret), false)
  const list = await ob.request('GET', '/v1/webhooks?limit=100', { key: org.adminKey })
  assert.equal(list.status, 200)
  assert.equal(list.text.includes(r.body.secret), false)
  assert.ok(list.body.data.some((w: { id: string }) => w.id === r.body.id))
  assert.ok(list.body.data.every((w: { secret?: string }) => w.secret === undefined))
})

test('every subscribable event type is accepted', async () => {
  const events = [
    'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound', 'inbound.received',
    'domain.health_changed', 'stream.paused', 'stream.resumed'
  ]
  const r = await create(org.adminKey, { url: 'https://hooks.example.com/all', events })
  assert.equal(r.status, 201)
  assert.deepEqual(r.body.events, events)
})

test('bad URLs and event lists are 400 validation_error naming the field', async () => {
  const cases: Array<[unknown, string[]]> = [
    [{ url: 'http://hooks.example.com/x', events: ['delivered'] }, ['url']],
    [{ url: 'https://user:pass@hooks.example.com/x', events: ['delivered'] }, ['url']],
    [{ url: 'https://hooks.example.com/' + 'a'.repeat(2040), events: ['delivered'] }, ['url']],
    [{ url: 'https://127.0.0.1/x', events: ['delivered'] }, ['url']],
    [{ url: 'https://[::1]/x', events: ['delivered'] }, ['url']],
    [{ url: 'https://2130706433/x', events: ['delivered'] }, ['url']],
    [{ url: 'https://localhost/x', events: ['delivered'] }, ['url']],
    [{ url: 'https://hooks.example.com/x', events: [] }, ['events']],
    [{ url: 'https://hooks.example.com/x', events: ['delivered', 'exploded'] }, ['events[1]']],
    [{ url: 'ftp://x', events: ['nope'] }, ['events[0]', 'url']],
    [{}, ['events', 'url']]
  ]
  for (const [body, fields] of cases) {
    const r = await create(org.adminKey, body)
    assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80))
    assert.equal(r.body.error.code, 'validation_error')
    assert.deepEqual(r.body.error.errors.map((e: { field: string }) => e.field).sort(), fields, JSON.stringify(body).slice(0, 80))
  }
})

test('PATCH changes events, pauses, and makes active again (also after failure)', async () => {
  const w = (await create(org.adminKey, { url: 'https://hooks.example.com/p', events: ['delivered'] })).body
  const ev = await ob.request('PATCH', `/v1/webhooks/${w.id}`, { key: org.adminKey, body: { events: ['opened', 'clicked'] } })
  assert.equal(ev.status, 200)
  assert.deepEqual(ev.body.events, ['opened', 'clicked'])
  assert.equal(ev.body.status, 'active')
  assert.equal(ev.body.secret, undefined)
  const paused = await ob.request('PATCH', `/v1/webhooks/${w.id}`, { key: org.adminKey, body: { status: 'paused' } })
  assert.equal(paused.status, 200)
  assert.equal(paused.body.status, 'paused')
  assert.equal((await ob.request('GET', `/v1/webhooks/${w.id}`, { key: org.adminKey })).body.status, 'paused')
  const active = await ob.request('PATCH', `/v1/webhooks/${w.id}`, { key: org.adminKey, body: { status: 'active' } })
  assert.equal(active.body.status, 'active')
  // The delivery side marks a webhook failed after its retries; active revives it.
  const key = `${org.orgId}.${w.id}`
  await ob.proc.cp.webhooks.put(key, { ...ob.proc.cp.webhooks.get(key)!, status: 'failed' })
  assert.equal((await ob.request('GET', `/v1/webhooks/${w.id}`, { key: org.adminKey })).body.status, 'failed')
  const revived = await ob.request('PATCH', `/v1/webhooks/${w.id}`, { key: org.adminKey, body: { status: 'active' } })
  assert.equal(revived.body.status, 'active')
  assert.equal(ob.proc.cp.webhooks.get(key)!.secret, w.secret)
})

test('PATCH validation: empty body, failed as a status, unknown events, a URL not https, an unknown field', async () => {
  const w = (await create(org.adminKey, { url: 'https://hooks.example.com/v', events: ['delivered'] })).body
  for (const body of [{}, { status: 'failed' }, { events: [] }, { events: ['x'] }, { url: 'http://elsewhere.example.com' }, { secret: 'x' }]) {
    const r = await ob.request('PATCH', `/v1/webhooks/${w.id}`, { key: org.adminKey, body })
    assert.equal(r.status, 400, JSON.stringify(body))
    assert.equal(r.body.error.code, 'validation_error')
  }
})

test('DELETE: 204, then GET, PATCH and DELETE are 404', async () => {
  const w = (await create(org.adminKey, { url: 'https://hooks.example.com/d', events: ['delivered'] })).body
  const del = await ob.request('DELETE', `/v1/webhooks/${w.id}`, { key: org.adminKey })
  assert.equal(del.status, 204)
  assert.equal((await ob.request('GET', `/v1/webhooks/${w.id}`, { key: org.adminKey })).status, 404)
  assert.equal((await ob.request('PATCH', `/v1/webhooks/${w.id}`, { key: org.adminKey, body: { status: 'paused' } })).status, 404)
  assert.equal((await ob.request('DELETE', `/v1/webhooks/${w.id}`, { key: org.adminKey })).status, 404)
})

test('another organisation\'s webhook is 403 on every endpoint and lists do not show it', async () => {
  const theirs = (await create(other.adminKey, { url: 'https://hooks.example.com/theirs', events: ['delivered'] })).body
  for (const [method, path, body] of [
    ['GET', `/v1/webhooks/${theirs.id}`, undefined],
    ['PATCH', `/v1/webhooks/${theirs.id}`, { status: 'paused' }],
    ['DELETE', `/v1/webhooks/${theirs.id}`, undefined]
  ] as const) {
    const r = await ob.request(method, path, { key: org.adminKey, ...(body !== undefined ? { body } : {}) })
    assert.equal(r.status, 403, `${method} ${path}`)
    assert.equal(r.body.error.code, 'forbidden')
  }
  const list = await ob.request('GET', '/v1/webhooks?limit=100', { key: org.adminKey })
  assert.ok(list.body.data.every((w: { id: string }) => w.id !== theirs.id))
  assert.equal((await ob.request('GET', `/v1/webhooks/${theirs.id}`, { key: other.adminKey })).body.status, 'active')
})
