import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { jetstreamManager } from '@nats-io/jetstream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { eventually } from '../../helpers/waiting.ts'
import { AUDIT_MAX_ENTRIES_PER_SCOPE, STREAM_AUDIT, auditSubject } from '../../../protocol/mod.ts'

/**
 * The audit log against a running Outbox: each kind of change is one entry with its actor, address, target and
 * changes, and no secret anywhere in the stream's bytes; another organisation's key sees none of it and cannot use
 * the operator route; filters and the cursor; the stream's retention; and a change whose entry cannot be stored.
 */
let ob: TestOutbox
let org: TestOrg
let other: TestOrg
let op: string
let opId: string
const logs: string[] = []
before(async () => {
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({ env: { OB_ROLE: 'gateway', OB_AUDIT_RETENTION_DAYS: '90' }, log: { level: 'info', stream } })
  org = await ob.org()
  other = await ob.org()
  const made = await ob.proc.cp.operatorKeys.create('audit')
  op = made.value
  opId = made.record.id
})
after(async () => { await ob.close() })

interface Entry {
  id: string, org_id: string | null, actor: { type: string, id: string }, address: string, at: string, action: string,
  target: string | null, changes: Record<string, any>, count: number, request_id: string
}

async function auditLog (key: string, query = '', path = '/v1/audit-log'): Promise<{ status: number, body: any }> {
  return await ob.request('GET', `${path}${query === '' ? '' : `?${query}`}`, { key })
}

/** Every entry of the org's log, newest first, read page by page. */
async function allEntries (key: string, query = '', path = '/v1/audit-log'): Promise<Entry[]> {
  const out: Entry[] = []
  let cursor: string | null = null
  do {
    const q: string = [query, 'limit=100', cursor === null ? '' : `cursor=${cursor}`].filter((s) => s !== '').join('&')
    const page = await auditLog(key, q, path)
    assert.equal(page.status, 200, JSON.stringify(page.body))
    out.push(...page.body.data)
    cursor = page.body.next_cursor
  } while (cursor !== null)
  return out
}

async function rawStreamText (scope: string): Promise<string> {
  const jsm = await jetstreamManager(ob.proc.nc)
  let text = ''
  let seq = 1
  for (;;) {
    const m = await jsm.direct.getMessage(STREAM_AUDIT, { seq, next_by_subj: auditSubject(scope) })
    if (m === null) return text
    text += m.string() + '\n'
    seq = m.seq + 1
  }
}

async function keyIdOf (key: string): Promise<string> {
  return (await ob.request('GET', '/v1/whoami', { key })).body.key_id
}

test('every kind of change is one entry with actor, address, target and changes, and no secret reaches the stream', async () => {
  const adminId = await keyIdOf(org.adminKey)
  const k = await ob.request('POST', '/v1/api-keys', {
    key: org.adminKey, body: { name: 'ci', domain_id: org.domainId, permissions: ['send'] }
  })
  assert.equal(k.status, 201, k.text)
  const rotated = await ob.request('POST', `/v1/api-keys/${k.body.id}/rotate`, { key: org.adminKey, body: { grace_period_minutes: 5 } })
  assert.equal(rotated.status, 201, rotated.text)
  assert.equal((await ob.request('DELETE', `/v1/api-keys/${rotated.body.id}`, { key: org.adminKey })).status, 204)
  const wh = await ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: 'https://hooks.example.com/in/tok3n-in-path?sig=abc', events: ['delivered'] }
  })
  assert.equal(wh.status, 201, wh.text)
  assert.equal((await ob.request('PATCH', `/v1/webhooks/${wh.body.id}`, { key: org.adminKey, body: { status: 'paused' } })).status, 200)
  const secret = await ob.request('POST', `/v1/webhooks/${wh.body.id}/rotate-secret`, {
    key: org.adminKey, body: { grace_period_minutes: 0 }
  })
  assert.equal(secret.status, 200, secret.text)
  const dom = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: `more.${org.domain}` } })
  assert.equal(dom.status, 201, dom.text)
  const hosts = await ob.request('PATCH', `/v1/domains/${dom.body.id}`, {
    key: org.adminKey, body: { tracking_host: `links.more.${org.domain}` }
  })
  assert.equal(hosts.status, 200, hosts.text)
  assert.equal((await ob.request('POST', `/v1/domains/${dom.body.id}/verify`, { key: org.adminKey })).status, 200)
  assert.equal((await ob.request('POST', `/v1/domains/${dom.body.id}/dkim/rotate`, { key: org.adminKey })).status, 200)
  assert.equal((await ob.request('DELETE', `/v1/domains/${dom.body.id}`, { key: org.adminKey })).status, 204)
  const rt = await ob.request('POST', '/v1/inbound/routes', {
    key: org.adminKey, body: { match: `*@${org.domain}`, action: { type: 'webhook', include_attachments: false } }
  })
  assert.equal(rt.status, 201, rt.text)
  assert.equal((await ob.request('DELETE', `/v1/inbound/routes/${rt.body.id}`, { key: org.adminKey })).status, 204)
  const tpl = await ob.request('POST', '/v1/templates', {
    key: org.adminKey, body: { name: 'welcome', subject: 'Hi {{name}}', html: '<p>hi</p>' }
  })
  assert.equal(tpl.status, 201, tpl.text)
  assert.equal((await ob.request('PATCH', `/v1/templates/${tpl.body.id}`, { key: org.adminKey, body: { subject: 'Hello' } })).status, 200)
  assert.equal((await ob.request('DELETE', `/v1/templates/${tpl.body.id}`, { key: org.adminKey })).status, 204)
  assert.equal((await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'gone@example.net' } })).status, 201)
  // already suppressed: no change, no entry
  assert.equal((await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'gone@example.net' } })).status, 200)
  assert.equal((await ob.request('DELETE', '/v1/suppressions/Gone@Example.net', { key: org.adminKey })).status, 204)
  assert.equal((await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan: 'starter' } })).status, 200)
  const opCall = async (method: string, path: string, body?: unknown): Promise<void> => {
    const res = await ob.request(method, `/v1/operator${path}`, { key: op, ...(body !== undefined ? { body } : {}) })
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.text}`)
  }
  await opCall('PUT', `/organizations/${org.orgId}/plan`, { plan: 'pro' })
  await opCall('POST', `/organizations/${org.orgId}/suspend`)
  await opCall('POST', `/organizations/${org.orgId}/resume`)
  await opCall('POST', '/egress/sources', { name: 'aud1', address: '192.0.2.71', ehlo: 'aud1.example.com' })
  await opCall('PUT', '/egress/sources/aud1/limits', { limits: { google: { maxConnections: 3 } } })
  await opCall('POST', '/egress/pools', { name: 'audpool', sources: [{ source: 'aud1' }] })
  await opCall('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: 'audpool' })
  await opCall('PUT', `/organizations/${org.orgId}/domains/${org.domainId}/egress-pool`, { pool: null })
  await opCall('PUT', `/organizations/${org.orgId}/egress-pool`, { pool: null })
  await opCall('PUT', '/egress/limits', { limits: { google: { maxConnections: 4 } } })

  const entries = await allEntries(org.adminKey)
  const oldestFirst = [...entries].reverse()
  assert.deepEqual(oldestFirst.map((e) => e.action), [
    'api_key.created', 'api_key.rotated', 'api_key.revoked',
    'webhook.created', 'webhook.updated', 'webhook.secret_rotated',
    'domain.created', 'domain.hosts_set', 'domain.verification_checked', 'domain.dkim_rotated', 'domain.deleted',
    'inbound_route.created', 'inbound_route.deleted',
    'template.created', 'template.updated', 'template.deleted',
    'suppression.added', 'suppression.removed',
    'organization.plan_set',
    'organization.plan_set', 'organization.suspended', 'organization.resumed',
    'organization.egress_pool_set', 'domain.egress_pool_set', 'organization.egress_pool_set'
  ])
  const by = (action: string): Entry => oldestFirst.find((e) => e.action === action)!
  for (const e of entries) {
    assert.equal(e.org_id, org.orgId)
    assert.match(e.address, /^(127\.0\.0\.1|::1|::ffff:127\.0\.0\.1)$/)
    assert.ok(Number.isFinite(Date.parse(e.at)))
    assert.equal(e.count, 1)
    assert.match(e.id, /^aud_[0-9a-z]{26}$/)
  }
  for (const e of entries.filter((x) => !x.action.startsWith('organization.') && !x.action.includes('egress_pool'))) {
    assert.deepEqual(e.actor, { type: 'api_key', id: adminId }, e.action)
  }
  assert.deepEqual(by('organization.suspended').actor, { type: 'operator', id: opId })
  assert.equal(by('organization.suspended').target, null)
  assert.deepEqual(by('api_key.created').changes, { name: 'ci', domain_id: org.domainId, permissions: ['send'], environment: 'live' })
  assert.equal(by('api_key.created').target, k.body.id)
  assert.equal(by('api_key.rotated').target, k.body.id)
  assert.equal(by('api_key.rotated').changes.new_api_key_id, rotated.body.id)
  assert.equal(by('api_key.revoked').target, rotated.body.id)
  assert.deepEqual(by('webhook.created').changes, { events: ['delivered'], host: 'hooks.example.com' })
  assert.equal(by('webhook.created').target, wh.body.id)
  assert.deepEqual(by('webhook.updated').changes, { status: 'paused' })
  assert.equal(by('webhook.secret_rotated').target, wh.body.id)
  assert.deepEqual(by('domain.created').changes, { name: `more.${org.domain}` })
  assert.deepEqual(by('domain.hosts_set').changes, { tracking_host: `links.more.${org.domain}` })
  assert.equal(by('domain.verification_checked').changes.status, 'verified')
  assert.ok(by('domain.dkim_rotated').changes.dkim_pending.length > 0)
  assert.equal(by('domain.deleted').target, dom.body.id)
  assert.deepEqual(by('inbound_route.created').changes.match, `*@${org.domain}`)
  assert.deepEqual(by('template.updated').changes, { fields: ['subject'] })
  assert.equal(by('suppression.added').target, 'gone@example.net')
  assert.equal(by('suppression.removed').target, 'gone@example.net')
  assert.deepEqual(by('organization.plan_set').changes, { plan: 'starter' })
  assert.deepEqual(by('domain.egress_pool_set').changes, { pool: null })
  assert.equal(by('domain.egress_pool_set').target, org.domainId)

  const installation = await allEntries(op, '', '/v1/operator/audit-log')
  assert.deepEqual(installation.map((e) => e.action).reverse().slice(-4),
    ['egress.source_created', 'egress.source_limits_set', 'egress.pool_set', 'egress.limits_set'])
  const created = installation.find((e) => e.action === 'egress.source_created')!
  assert.deepEqual({ org: created.org_id, target: created.target, actor: created.actor, changes: created.changes },
    { org: null, target: 'aud1', actor: { type: 'operator', id: opId }, changes: { address: '192.0.2.71', ehlo: 'aud1.example.com' } })

  const raw = await rawStreamText(org.orgId)
  for (const [what, value] of [
    ['the new key', k.body.key], ['the rotated key', rotated.body.key], ['the webhook secret', wh.body.secret],
    ['the rotated secret', secret.body.secret], ['the webhook URL path', 'tok3n-in-path'], ['the URL query', 'sig=abc']
  ] as const) {
    assert.ok(typeof value === 'string' && value.length > 0)
    assert.ok(!raw.includes(value), `${what} is not in the stream`)
  }
  assert.ok(!raw.includes('PRIVATE KEY'), 'no private key in the stream')
})

test('another organisation sees none of it; an organisation key cannot use the operator routes', async () => {
  await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'mine@example.net' } })
  const theirs = await allEntries(other.adminKey)
  assert.ok(theirs.every((e) => e.org_id === other.orgId))
  assert.ok(!theirs.some((e) => e.target === 'mine@example.net'))
  const forbidden = await auditLog(other.adminKey, '', `/v1/operator/organizations/${org.orgId}/audit-log`)
  assert.equal(forbidden.status, 403)
  assert.equal((await auditLog(org.adminKey, '', '/v1/operator/audit-log')).status, 403)
  const sendOnly = await ob.key(org, ['send'])
  assert.equal((await auditLog(sendOnly)).status, 403, 'a key without manage cannot read the log')
  const asOperator = await allEntries(op, '', `/v1/operator/organizations/${org.orgId}/audit-log`)
  assert.ok(asOperator.some((e) => e.target === 'mine@example.net'))
  assert.equal(asOperator[0]!.id, (await allEntries(org.adminKey))[0]!.id)
})

test('an admin key reset and a deletion are recorded; the operator reads a deleted organisation\'s log', async () => {
  const gone = await ob.org()
  assert.equal((await ob.request('POST', '/v1/suppressions', { key: gone.adminKey, body: { email: 'x@example.net' } })).status, 201)
  const reset = await ob.request('POST', `/v1/operator/organizations/${gone.orgId}/reset-admin-key`, { key: op })
  assert.equal(reset.status, 201, reset.text)
  const del = await ob.request('DELETE', `/v1/operator/organizations/${gone.orgId}`, { key: op })
  assert.equal(del.status, 200, del.text)
  const entries = await allEntries(op, '', `/v1/operator/organizations/${gone.orgId}/audit-log`)
  assert.deepEqual(entries.map((e) => e.action), ['organization.deleted', 'organization.admin_key_reset', 'suppression.added'])
  assert.deepEqual(entries[1]!.changes, { api_key_id: reset.body.api_key_id, revoked_api_key_ids: reset.body.revoked })
  assert.deepEqual(entries[0]!.actor, { type: 'operator', id: opId })
  assert.ok(!(await rawStreamText(gone.orgId)).includes(reset.body.api_key), 'the new admin key is not in the stream')
})

test('filters by action, actor, target and time; the cursor walks every entry once, newest first', async () => {
  const o = await ob.org()
  const second = await ob.key(o, ['manage', 'read'])
  const secondId = await keyIdOf(second)
  const started = new Date().toISOString()
  for (let i = 0; i < 7; i++) {
    const key = i % 2 === 0 ? o.adminKey : second
    assert.equal((await ob.request('POST', '/v1/suppressions', { key, body: { email: `s${i}@example.net` } })).status, 201)
  }
  assert.equal((await ob.request('DELETE', '/v1/suppressions/s3@example.net', { key: o.adminKey })).status, 204)
  const all = await allEntries(o.adminKey)
  assert.deepEqual(all.map((e) => e.target), [
    's3@example.net', 's6@example.net', 's5@example.net', 's4@example.net', 's3@example.net', 's2@example.net', 's1@example.net',
    's0@example.net'
  ])
  const ids = new Set<string>()
  let cursor: string | null = null
  let pages = 0
  do {
    const page = await auditLog(o.adminKey, `limit=3${cursor === null ? '' : `&cursor=${cursor}`}`)
    assert.equal(page.status, 200)
    assert.ok(page.body.data.length <= 3)
    for (const e of page.body.data) { assert.ok(!ids.has(e.id), 'each entry once'); ids.add(e.id) }
    cursor = page.body.next_cursor
    pages++
  } while (cursor !== null)
  assert.equal(ids.size, 8)
  assert.equal(pages, 3)
  assert.deepEqual((await allEntries(o.adminKey, 'action=suppression.removed')).map((e) => e.target), ['s3@example.net'])
  assert.deepEqual((await allEntries(o.adminKey, `actor=${secondId}`)).map((e) => e.target),
    ['s5@example.net', 's3@example.net', 's1@example.net'])
  assert.equal((await allEntries(o.adminKey, 'target=s3%40example.net')).length, 2)
  assert.equal((await allEntries(o.adminKey, `since=${encodeURIComponent(started)}`)).length, 8)
  assert.equal((await allEntries(o.adminKey, `until=${encodeURIComponent(started)}`)).length, 0)
  assert.equal((await allEntries(o.adminKey, 'since=2100-01-01T00:00:00Z')).length, 0)
  assert.equal((await auditLog(o.adminKey, 'cursor=bm9wZQ')).status, 400)
  assert.equal((await auditLog(o.adminKey, 'since=yesterday')).status, 400)
})

test('the stream keeps OB_AUDIT_RETENTION_DAYS days, drops its oldest when full, and caps each organisation', async () => {
  const jsm = await jetstreamManager(ob.proc.nc)
  const info = await jsm.streams.info(STREAM_AUDIT)
  assert.equal(info.config.max_age, 90 * 24 * 3600 * 1e9)
  assert.equal(info.config.discard, 'old')
  assert.equal(info.config.max_msgs_per_subject, AUDIT_MAX_ENTRIES_PER_SCOPE)
  assert.ok(info.config.max_bytes > 0)
  assert.deepEqual(info.config.subjects, ['ob.audit.>'])
})

test('a change whose entry cannot be stored is made and answered, counted, and written whole to the log', async () => {
  const o = await ob.org()
  const jsm = await jetstreamManager(ob.proc.nc)
  const config = (await jsm.streams.info(STREAM_AUDIT)).config
  await jsm.streams.delete(STREAM_AUDIT)
  try {
    const before = ob.proc.metrics.auditUnrecorded.value
    const res = await ob.request('POST', '/v1/suppressions', { key: o.adminKey, body: { email: 'lost@example.net' } })
    assert.equal(res.status, 201, 'the change is made and answered')
    assert.equal(ob.proc.metrics.auditUnrecorded.value, before + 1)
    const line = await eventually(
      () => logs.flatMap((l) => l.split('\n')).find((l) => l.includes('audit.unrecorded') && l.includes(o.orgId)),
      'the audit.unrecorded line'
    )
    const parsed = JSON.parse(line)
    assert.equal(parsed.kind, 'security')
    assert.deepEqual({ action: parsed.entry.action, target: parsed.entry.target },
      { action: 'suppression.added', target: 'lost@example.net' })
    const read = await auditLog(o.adminKey)
    assert.equal(read.status, 503, 'a log that cannot be read is 503, never an empty page')
  } finally {
    await jsm.streams.add(config)
  }
})
