import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { OutboxClient, OutboxApiError } from '../../../client/src/mod.ts'

let ob: TestOutbox
let org: TestOrg
let client: OutboxClient

before(async () => {
  ob = await TestOutbox.start({ env: { OB_WEBHOOK_ALLOW_PRIVATE: 'true' } })
  org = await ob.org('pro')
  client = new OutboxClient({ apiKey: org.adminKey, baseUrl: ob.baseUrl })
})
after(async () => { await ob.close() })

test('whoami describes the key', async () => {
  const me = await client.whoami.get()
  assert.equal(me.organization_id, org.orgId)
  assert.equal(me.domain, org.domain)
  assert.deepEqual(me.permissions, ['admin'])
})

test('api keys: create, list, rotate, revoke; the revoked key gets a typed 401', async () => {
  const created = await client.apiKeys.create({ name: 'ci', domain_id: org.domainId, permissions: ['read'] })
  assert.match(created.key, /^ob_live_/)
  const list = await client.apiKeys.list({ limit: 100 })
  assert.ok(list.data.some((k) => k.id === created.id))
  const rotated = await client.apiKeys.rotate(created.id, { grace_period_minutes: 0 })
  assert.equal(rotated.replaces, created.id)
  const newKey = new OutboxClient({ apiKey: rotated.key, baseUrl: ob.baseUrl })
  assert.equal((await newKey.whoami.get()).key_id, rotated.id)
  await client.apiKeys.delete(rotated.id)
  const err = await newKey.whoami.get().then(() => undefined, (e: unknown) => e)
  assert.ok(err instanceof OutboxApiError)
  assert.equal(err.status, 401)
  assert.equal(err.code, 'unauthorized')
  assert.match(err.requestId ?? '', /^req_/)
})

test('domains: create, duplicate 409, verify, delete', async () => {
  const name = `c${Date.now()}.example.org`
  const d = await client.domains.create({ name })
  assert.equal(d.status, 'pending')
  assert.ok(d.records.some((r) => r.name.includes('_domainkey')))
  const dup = await client.domains.create({ name }).catch((e: unknown) => e)
  assert.ok(dup instanceof OutboxApiError && dup.status === 409 && dup.code === 'conflict')
  const verified = await client.domains.verify(d.id)
  assert.equal(verified.status, 'verified')
  await client.domains.delete(d.id)
  const gone = await client.domains.get(d.id).catch((e: unknown) => e)
  assert.ok(gone instanceof OutboxApiError && gone.status === 404)
})

test('webhooks: create shows the secret once, patch pauses, bad input is a typed validation error', async () => {
  const wh = await client.webhooks.create({ url: 'https://127.0.0.1:9/hook', events: ['delivered', 'bounced'] })
  assert.match(wh.secret, /^whsec_/)
  const read = await client.webhooks.get(wh.id)
  assert.equal((read as Record<string, unknown>).secret, undefined)
  assert.equal((await client.webhooks.update(wh.id, { status: 'paused' })).status, 'paused')
  const bad = await client.webhooks.create({ url: 'http://insecure.example', events: ['nope' as 'delivered'] }).catch((e: unknown) => e)
  assert.ok(bad instanceof OutboxApiError)
  assert.equal(bad.status, 400)
  assert.equal(bad.code, 'validation_error')
  assert.ok(bad.errors.length >= 2, JSON.stringify(bad.errors))
  assert.ok(bad.errors.some((e) => e.field.startsWith('url')))
  await client.webhooks.delete(wh.id)
})

test('templates: create, update, list, delete', async () => {
  const t = await client.templates.create({ name: 'welcome', subject: 'Hi {{name}}', html: '<p>Hi {{name}}</p>' })
  const updated = await client.templates.update(t.id, { subject: 'Hello {{name}}' })
  assert.equal(updated.subject, 'Hello {{name}}')
  assert.ok((await client.templates.list()).data.some((x) => x.id === t.id))
  await client.templates.delete(t.id)
})

test('a read-only key gets a typed 403 on management, never retried', async () => {
  const reader = new OutboxClient({
    apiKey: await ob.key(org, ['read']), baseUrl: ob.baseUrl, onRetry: () => { throw new Error('403 must not be retried') }
  })
  const err = await reader.apiKeys.list().catch((e: unknown) => e)
  assert.ok(err instanceof OutboxApiError)
  assert.equal(err.status, 403)
  assert.equal(err.code, 'forbidden')
  assert.ok(err.message.length > 0)
})
