import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * A broadcast stream with its own egress pool, against real servers: one Outbox (all roles) sending through the
 * egress layer to an SMTP sink, with sources bound to 127.0.0.2, 127.0.0.3 and 127.0.0.4 (this machine has all of
 * 127.0.0.0/8), so the sink's client address says which pool each message left from. The operator assigns the
 * pools through the operator API; the organisation sends through the HTTP API.
 */
let sink: SmtpSink
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let stranger: TestOrg
let operatorKey: string
let operatorKeyId: string
let sendKey: string
let n = 0
const logs: string[] = []

before(async () => {
  sink = await SmtpSink.start({ keepRaw: false })
  dns = await DnsServer.start({
    MX: { 'small.test': [{ exchange: 'mx.small.test', priority: 10 }] }, A: { 'mx.small.test': ['127.0.0.1'] }
  })
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({
    env: {
      OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(sink.port), OB_SMTP_ALLOW_PRIVATE: 'true', OB_DELIVERY_RETRY_SCHEDULE: '1'
    },
    log: { level: 'info', stream }
  })
  org = await ob.org()
  stranger = await ob.org()
  sendKey = await ob.key(org, ['send'])
  const made = await ob.proc.cp.operatorKeys.create('stream pools')
  operatorKey = made.value
  operatorKeyId = made.record.id
  const egress = ob.proc.cp.egress
  await egress.addSource({ name: 'mta2', address: '127.0.0.2', ehlo: 'mta2.outbox.test' })
  await egress.addSource({ name: 'mta3', address: '127.0.0.3', ehlo: 'mta3.outbox.test' })
  await egress.addSource({ name: 'mta4', address: '127.0.0.4', ehlo: 'mta4.outbox.test' })
  await egress.putPool('org-pool', [{ source: 'mta2' }])
  await egress.putPool('news-pool', [{ source: 'mta3' }])
  await egress.putPool('dom-pool', [{ source: 'mta4' }])
  for (const [o, id] of [[org, 'news'], [stranger, 'news'], [stranger, 'promo']] as const) {
    const r = await ob.request('POST', '/v1/streams', { key: o.adminKey, body: { id, name: id } })
    assert.equal(r.status, 201, r.text)
  }
  assertOk(await op('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: 'org-pool' }))
})
after(async () => {
  await ob.close()
  await sink.close()
  await dns.close()
})

function assertOk (r: { status: number, text: string }, status = 200): void {
  assert.equal(r.status, status, r.text)
}

async function op (method: string, path: string, body?: unknown): ReturnType<TestOutbox['request']> {
  return await ob.request(method, `/v1/operator${path}`, { key: operatorKey, ...(body !== undefined ? { body } : {}) })
}

const streamPool = (o: TestOrg, stream: string): string => `/organizations/${o.orgId}/streams/${stream}/egress-pool`

/** Sends one message on `stream` (absent: transactional) and returns the client address the sink saw it from. */
async function sentFrom (stream?: string): Promise<string> {
  const to = `user${++n}@small.test`
  const r = await ob.request('POST', '/v1/messages/send', {
    key: sendKey,
    body: { from: `App <app@${org.domain}>`, to, subject: 'Hi', text: 'Hello', ...(stream !== undefined ? { stream } : {}) }
  })
  assert.equal(r.status, 202, r.text)
  const got = await eventually(() => sink.to(to)[0], `the message to ${to} at the sink`)
  return got.remoteAddress
}

test('mail on a stream with its own pool leaves from it; transactional mail leaves from the domain\'s, else organisation\'s', async () => {
  const set = await op('PUT', streamPool(org, 'news'), { pool: 'news-pool' })
  assertOk(set)
  assert.deepEqual(set.body, { organization_id: org.orgId, stream: 'news', egress_pool: 'news-pool' })
  assert.equal(await sentFrom('news'), '127.0.0.3', 'the stream\'s pool')
  assert.equal(await sentFrom(), '127.0.0.2', 'transactional: the organisation\'s pool')
  // a domain's own pool wins over its organisation's, and the stream's over both
  assertOk(await op('PUT', `/organizations/${org.orgId}/domains/${org.domainId}/egress-pool`, { pool: 'dom-pool' }))
  assert.equal(await sentFrom('news'), '127.0.0.3', 'the stream\'s pool over the domain\'s')
  assert.equal(await sentFrom(), '127.0.0.4', 'transactional: the domain\'s pool')
  // the operator's view of the organisation shows each assignment where it is made
  const shown = await op('GET', `/organizations/${org.orgId}`)
  assertOk(shown)
  assert.equal(shown.body.egress_pool, 'org-pool')
  assert.deepEqual(shown.body.domains.map((d: any) => [d.id, d.egress_pool]), [[org.domainId, 'dom-pool']])
  assert.deepEqual(shown.body.streams, [{ id: 'news', egress_pool: 'news-pool' }])
  // removing the stream's assignment: its mail follows the domain's again
  const removed = await op('PUT', streamPool(org, 'news'), { pool: null })
  assert.deepEqual(removed.body, { organization_id: org.orgId, stream: 'news', egress_pool: null })
  assert.equal(await sentFrom('news'), '127.0.0.4', 'no pool of its own: the domain\'s')
  assert.deepEqual((await op('GET', `/organizations/${org.orgId}`)).body.streams, [{ id: 'news', egress_pool: null }])
  assertOk(await op('PUT', `/organizations/${org.orgId}/domains/${org.domainId}/egress-pool`, { pool: null }))
})

test('each assignment is an audit entry and a security line naming the operator key, the organisation and the stream', async () => {
  assertOk(await op('PUT', streamPool(org, 'news'), { pool: 'news-pool' }))
  const entry = await eventually(async () => {
    const audit = await op('GET', `/organizations/${org.orgId}/audit-log`)
    return audit.body?.data?.find((e: any) => e.action === 'stream.egress_pool_set' && e.changes.pool === 'news-pool')
  }, 'the audit entry of the assignment')
  assert.equal(entry.target, 'news')
  assert.deepEqual(entry.changes, { pool: 'news-pool' })
  assert.deepEqual(entry.actor, { type: 'operator', id: operatorKeyId })
  const line = await eventually(() => logs.flatMap((l) => l.split('\n')).filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, any>)
    .find((l) => l.event === 'operator.egress_changed' && l.change === 'stream.pool_assigned' && l.pool === 'news-pool'),
  'the security line')
  assert.equal(line.operator_key_id, operatorKeyId)
  assert.equal(line.org_id, org.orgId)
  assert.equal(line.stream, 'news')
})

test('the organisation\'s own keys cannot set a stream\'s pool, and the streams API does not show it', async () => {
  const refused = await ob.request('PUT', `/v1/operator${streamPool(org, 'news')}`, { key: org.adminKey, body: { pool: 'org-pool' } })
  assert.equal(refused.status, 403, refused.text)
  assert.equal(refused.body.error.code, 'forbidden')
  const patched = await ob.request('PATCH', '/v1/streams/news', { key: org.adminKey, body: { egress_pool: 'org-pool' } })
  assert.equal(patched.status, 400, patched.text)
  assert.equal(patched.body.error.code, 'validation_error')
  assert.equal(ob.proc.cp.streams.get(org.orgId, 'news')?.egress_pool, 'news-pool', 'the assignment stays as the operator set it')
  const list = await ob.request('GET', '/v1/streams', { key: org.adminKey })
  assert.ok(list.body.data.every((s: any) => !('egress_pool' in s)), list.text)
  // a change of the stream by its organisation keeps the operator's assignment
  assertOk(await ob.request('PATCH', '/v1/streams/news', { key: org.adminKey, body: { name: 'News' } }))
  assert.equal(ob.proc.cp.streams.get(org.orgId, 'news')?.egress_pool, 'news-pool')
})

test('only a broadcast stream of the organisation named can be targeted', async () => {
  // `promo` is another organisation's stream: named under this organisation, it does not exist
  const theirs = await op('PUT', `/organizations/${org.orgId}/streams/promo/egress-pool`, { pool: 'news-pool' })
  assert.equal(theirs.status, 404, theirs.text)
  assert.equal(theirs.body.error.code, 'not_found')
  assert.equal(ob.proc.cp.streams.get(stranger.orgId, 'promo')?.egress_pool, undefined)
  const ghostOrg = await op('PUT', '/organizations/org_00000000000000000000000000/streams/news/egress-pool', { pool: 'news-pool' })
  assert.equal(ghostOrg.status, 404, ghostOrg.text)
  assert.equal(ob.proc.cp.streams.get(stranger.orgId, 'news')?.egress_pool, undefined, 'the stranger\'s stream of the same id is untouched')
  const transactional = await op('PUT', streamPool(org, 'transactional'), { pool: 'news-pool' })
  assert.equal(transactional.status, 422, transactional.text)
  assert.equal(transactional.body.error.code, 'unprocessable')
  const unknownPool = await op('PUT', streamPool(org, 'news'), { pool: 'ghost' })
  assert.equal(unknownPool.status, 422, unknownPool.text)
  const badName = await op('PUT', streamPool(org, 'news'), { pool: 'Bad Name' })
  assert.equal(badName.status, 400, badName.text)
})

test('a pool assigned to a stream cannot be deleted; deleting the stream frees it', async () => {
  assertOk(await op('PUT', streamPool(org, 'news'), { pool: 'news-pool' }))
  const refused = await op('DELETE', '/egress/pools/news-pool')
  assert.equal(refused.status, 409, refused.text)
  assert.equal(refused.body.error.code, 'egress_pool_in_use')
  assert.deepEqual(refused.body.error.details.streams, [{ id: 'news', organization_id: org.orgId }])
  assert.equal(refused.body.error.details.stream_count, 1)
  assertOk(await ob.request('DELETE', '/v1/streams/news', { key: org.adminKey }), 204)
  assertOk(await op('DELETE', '/egress/pools/news-pool'), 204)
  // a stream made again under the id starts without a pool of its own
  assertOk(await ob.request('POST', '/v1/streams', { key: org.adminKey, body: { id: 'news', name: 'Newsletter' } }), 201)
  assert.equal(ob.proc.cp.streams.get(org.orgId, 'news')?.egress_pool, undefined)
  assert.equal(await sentFrom('news'), '127.0.0.2', 'the organisation\'s pool')
})
