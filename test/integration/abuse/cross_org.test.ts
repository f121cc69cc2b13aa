import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'

/**
 * Organisation B's admin key against every kind of resource organisation A owns: 403 (or 404 where documented),
 * never A's data in the answer, and A's resources unchanged afterwards.
 */
let dns: DnsServer
let ob: TestOutbox
let a: TestOrg
let b: TestOrg
const ids: Record<string, string> = {}
const secrets: string[] = []

before(async () => {
  dns = await DnsServer.start({ A: { 'hooks.public.test': ['93.184.215.14'] } })
  ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } })
  a = await ob.org()
  b = await ob.org()
  const create = async (path: string, body: unknown): Promise<any> => {
    const r = await ob.request('POST', path, { key: a.adminKey, body })
    assert.ok(r.status === 201 || r.status === 202, `${path}: ${r.status} ${r.text}`)
    return r.body
  }
  const key = await create('/v1/api-keys', { name: 'a-key', domain_id: a.domainId, permissions: ['send'] })
  ids.key = key.id
  secrets.push(key.key ?? key.value ?? '')
  ids.domain = (await create('/v1/domains', { name: `second.${a.domain}` })).id
  const wh = await create('/v1/webhooks', { url: 'https://hooks.public.test/a', events: ['delivered'] })
  ids.webhook = wh.id
  secrets.push(wh.secret)
  ids.template = (await create('/v1/templates', {
    name: 'a-secret-template', subject: 'A only', html: '<p>a-private-html</p>', text: 'a-private-text'
  })).id
  ids.route = (await create('/v1/inbound/routes', { match: `*@${a.domain}`, action: { type: 'webhook', include_attachments: false } })).id
  const sandbox = await ob.key(a, ['send'], 'test')
  const sent = await ob.request('POST', '/v1/messages/send', {
    key: sandbox, body: { from: `x@${a.domain}`, to: 'someone@example.com', subject: 'a-private-subject', text: 'hi' }
  })
  assert.equal(sent.status, 202, sent.text)
  ids.message = sent.body.id
  await create('/v1/suppressions', { email: 'only-a@example.com' })
})
after(async () => { await ob.close(); await dns.close() })

function assertRefused (res: { status: number, text: string }, what: string, allowed = [403, 404]): void {
  assert.ok(allowed.includes(res.status), `${what} → ${res.status} ${res.text.slice(0, 300)}`)
  for (const s of [...secrets, a.domain, a.orgId, 'a-private', 'a-secret-template', 'only-a@']) {
    if (s !== '') assert.ok(!res.text.includes(s), `${what} leaks ${s}`)
  }
}

const attempts = (): Array<[string, string, unknown?]> => [
  ['GET', `/v1/api-keys/${ids.key}`],
  ['DELETE', `/v1/api-keys/${ids.key}`],
  ['POST', `/v1/api-keys/${ids.key}/rotate`, { grace_period_minutes: 0 }],
  ['GET', `/v1/domains/${ids.domain}`],
  ['DELETE', `/v1/domains/${ids.domain}`],
  ['POST', `/v1/domains/${ids.domain}/verify`],
  ['GET', `/v1/webhooks/${ids.webhook}`],
  ['PATCH', `/v1/webhooks/${ids.webhook}`, { status: 'paused' }],
  ['DELETE', `/v1/webhooks/${ids.webhook}`],
  ['POST', `/v1/webhooks/${ids.webhook}/test`, { type: 'delivered' }],
  ['GET', `/v1/webhooks/${ids.webhook}/deliveries`],
  ['GET', `/v1/templates/${ids.template}`],
  ['PATCH', `/v1/templates/${ids.template}`, { subject: 'hijacked' }],
  ['DELETE', `/v1/templates/${ids.template}`],
  ['GET', `/v1/inbound/routes/${ids.route}`],
  ['DELETE', `/v1/inbound/routes/${ids.route}`],
  ['GET', `/v1/messages/${ids.message}`],
  ['GET', `/v1/events?message_id=${ids.message}`]
]

test('every resource type of another organisation is refused without its data', async () => {
  for (const [method, path, body] of attempts()) {
    const res = await ob.request(method, path, { key: b.adminKey, ...(body !== undefined ? { body } : {}) })
    assertRefused(res, `${method} ${path}`)
  }
})

test("sending with another organisation's template or domain is refused", async () => {
  const res = await ob.request('POST', '/v1/messages/send', {
    key: b.adminKey, body: { from: `x@${a.domain}`, to: 'y@example.com', template_id: ids.template }
  })
  assert.ok(res.status >= 400 && res.status < 500, res.text)
  assert.ok(!res.text.includes('a-private'), res.text)
  const key = await ob.request('POST', '/v1/api-keys', {
    key: b.adminKey, body: { name: 'x', domain_id: a.domainId, permissions: ['send'] }
  })
  assertRefused(key, 'key on the other org domain', [400, 403, 404])
})

test('lists hold only the caller’s own resources; suppressions are per organisation', async () => {
  for (const path of ['/v1/api-keys', '/v1/domains', '/v1/webhooks', '/v1/templates', '/v1/inbound/routes', '/v1/messages', '/v1/events',
    '/v1/suppressions']) {
    const res = await ob.request('GET', path, { key: b.adminKey })
    assert.equal(res.status, 200, `${path}: ${res.text}`)
    for (const id of Object.values(ids)) assert.ok(!res.text.includes(id), `${path} lists ${id}`)
    assert.ok(!res.text.includes('only-a@'), `${path} lists A's suppression`)
  }
  const del = await ob.request('DELETE', '/v1/suppressions/only-a%40example.com', { key: b.adminKey })
  assert.equal(del.status, 404, del.text)
  const still = await ob.request('GET', '/v1/suppressions', { key: a.adminKey })
  assert.ok(still.text.includes('only-a@example.com'), 'A keeps its suppression')
})

test("A's resources are unchanged after B's attempts", async () => {
  for (const path of [`/v1/api-keys/${ids.key}`, `/v1/domains/${ids.domain}`, `/v1/webhooks/${ids.webhook}`,
    `/v1/templates/${ids.template}`, `/v1/inbound/routes/${ids.route}`, `/v1/messages/${ids.message}`]) {
    const res = await ob.request('GET', path, { key: a.adminKey })
    assert.equal(res.status, 200, `${path}: ${res.text}`)
  }
  const wh = await ob.request('GET', `/v1/webhooks/${ids.webhook}`, { key: a.adminKey })
  assert.equal(wh.body.status, 'active')
  const tpl = await ob.request('GET', `/v1/templates/${ids.template}`, { key: a.adminKey })
  assert.equal(tpl.body.subject, 'A only')
  const key = await ob.request('GET', `/v1/api-keys/${ids.key}`, { key: a.adminKey })
  assert.equal(key.body.revoked_at ?? null, null, 'not revoked by B')
})
