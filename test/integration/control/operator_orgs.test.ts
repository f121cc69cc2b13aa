import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { WebSocket } from 'undici'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { freePort } from '../../helpers/ports.ts'
import { submissionClient } from '../../helpers/submission.ts'
import { createOrganization } from '../../../gateway/control/orgs.ts'
import { EventReader } from '../../helpers/events.ts'
import { eventually } from '../../helpers/waiting.ts'
import { MessageStore } from '../../../stores/read_model/mod.ts'

/**
 * The operator's organisation API against a running Outbox (all roles, SMTP submission on, mail relayed to a sink):
 * list and read, plans (the limit every key meets from the next request), suspension (HTTP and SMTP refused, queued
 * mail still delivered, resume restores), a new admin key, deletion; and one security-log line per change.
 */
let ob: TestOutbox
let sink: SmtpSink
let port: number
let op: string
let opId: string
const logs: string[] = []
before(async () => {
  sink = await SmtpSink.start()
  port = await freePort()
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({
    env: { OB_ROLE: 'all', OB_SMTP_RELAY: sink.url, OB_SMTP_SUBMISSION_PORT: String(port), OB_ENTERPRISE_RATE_LIMIT: '4321' },
    log: { level: 'info', stream }
  })
  const made = await ob.proc.cp.operatorKeys.create('orgs')
  op = made.value
  opId = made.record.id
})
after(async () => {
  await ob.close()
  await sink.close()
})

const call = async (method: string, path: string, body?: unknown): ReturnType<TestOutbox['request']> =>
  await ob.request(method, `/v1/operator/organizations${path}`, { key: op, ...(body !== undefined ? { body } : {}) })

function assertError (res: Awaited<ReturnType<typeof call>>, status: number, code: string): void {
  assert.equal(res.status, status, res.text)
  assert.equal(res.body.error.code, code, res.text)
}

interface SmtpFailure { responseCode?: number, response?: string }
async function refusal (p: Promise<unknown>): Promise<SmtpFailure> {
  try { await p } catch (err) { return err as SmtpFailure }
  throw new Error('the message was accepted')
}

const mail = (org: TestOrg, to: string): Record<string, string> => ({ from: `app@${org.domain}`, to, subject: 'hi', text: 'hello' })

test('list pages oldest first with plan, status and counts; one organisation shows its domains; unknown ids are 404', async () => {
  const a = await ob.org('starter')
  const b = await ob.org('pro')
  await ob.key(a, ['send'])
  await ob.request('POST', '/v1/webhooks', { key: a.adminKey, body: { url: 'https://hooks.example.com/x', events: ['delivered'] } })
  const seen: Array<Record<string, any>> = []
  let cursor: string | null = null
  do {
    const page = await call('GET', `?limit=1${cursor === null ? '' : `&cursor=${cursor}`}`)
    assert.equal(page.status, 200, page.text)
    assert.ok(page.body.data.length <= 1)
    seen.push(...page.body.data)
    cursor = page.body.next_cursor
  } while (cursor !== null)
  const ids = seen.map((o) => o.id)
  assert.ok(ids.indexOf(a.orgId) >= 0 && ids.indexOf(a.orgId) < ids.indexOf(b.orgId), 'oldest first')
  const rowA = seen.find((o) => o.id === a.orgId)!
  assert.deepEqual(
    { plan: rowA.plan, rate: rowA.rate_limit_per_minute, status: rowA.status, pool: rowA.egress_pool, counts: rowA.counts },
    { plan: 'starter', rate: 300, status: 'active', pool: 'default', counts: { api_keys: 2, domains: 1, webhooks: 1 } }
  )
  const one = await call('GET', `/${a.orgId}`)
  assert.equal(one.status, 200, one.text)
  assert.deepEqual(one.body.domains, [{ id: a.domainId, name: a.domain, status: 'verified', egress_pool: null }])
  assert.deepEqual(one.body.streams, [])
  assertError(await call('GET', '/org_00000000000000000000000000'), 404, 'not_found')
  assertError(await call('GET', '/nothing'), 404, 'not_found')
  assertError(await call('GET', '?status=gone'), 400, 'validation_error')
})

test('a plan set by the operator is the RateLimit-Limit of the org\'s next request; enterprise takes its own limit', async () => {
  const org = await ob.org('free')
  const read = await ob.key(org, ['read'])
  assert.equal((await ob.request('GET', '/v1/suppressions', { key: read })).headers.get('ratelimit-limit'), '60')
  const pro = await call('PUT', `/${org.orgId}/plan`, { plan: 'pro' })
  assert.equal(pro.status, 200, pro.text)
  assert.equal(pro.body.rate_limit_per_minute, 1000)
  assert.equal((await ob.request('GET', '/v1/suppressions', { key: read })).headers.get('ratelimit-limit'), '1000')
  const ent = await call('PUT', `/${org.orgId}/plan`, { plan: 'enterprise', rate_limit_per_minute: 20_000 })
  assert.equal(ent.body.rate_limit_per_minute, 20_000)
  const billing = await ob.request('GET', '/v1/billing', { key: org.adminKey })
  assert.deepEqual(billing.body, { plan: 'enterprise', rate_limit_per_minute: 20_000 })
  assert.equal(billing.headers.get('ratelimit-limit'), '20000')
  // without its own limit, enterprise is OB_ENTERPRISE_RATE_LIMIT
  assert.equal((await call('PUT', `/${org.orgId}/plan`, { plan: 'enterprise' })).body.rate_limit_per_minute, 4321)
  const bad = await call('PUT', `/${org.orgId}/plan`, { plan: 'pro', rate_limit_per_minute: 10 })
  assertError(bad, 400, 'validation_error')
  assert.equal(bad.body.error.field, 'rate_limit_per_minute')
  for (const body of [{}, { plan: 'platinum' }, { plan: 'enterprise', rate_limit_per_minute: 0 }, { plan: 'pro', extra: 1 }]) {
    assertError(await call('PUT', `/${org.orgId}/plan`, body), 400, 'validation_error')
  }
  assertError(await call('PUT', '/org_00000000000000000000000000/plan', { plan: 'pro' }), 404, 'not_found')
})

test('a suspended organisation\'s keys: 403 on every route, refused by SMTP; queued mail still delivered; resume restores', async () => {
  const org = await ob.org()
  const send = await ob.key(org, ['send'])
  // one pooled connection: the second message goes over the session the first one authenticated
  const pooled = submissionClient(port, send, { pool: true, maxConnections: 1 } as Parameters<typeof submissionClient>[2])
  const before = await pooled.sendMail(mail(org, 'early@dest.example'))
  assert.match(before.response, /^250 /)
  const scheduledAt = new Date(Date.now() + 3000).toISOString()
  const queued = await ob.request('POST', '/v1/messages/send', {
    key: send, body: { ...mail(org, 'queued@dest.example'), scheduled_at: scheduledAt }
  })
  assert.equal(queued.status, 202, queued.text)

  const suspended = await call('POST', `/${org.orgId}/suspend`)
  assert.equal(suspended.status, 200, suspended.text)
  assert.equal(suspended.body.status, 'suspended')
  assert.equal(typeof suspended.body.suspended_at, 'string')
  const again = await call('POST', `/${org.orgId}/suspend`)
  assert.equal(again.body.suspended_at, suspended.body.suspended_at, 'suspending twice keeps the first time')
  for (const [method, path, key, body] of [
    ['GET', '/v1/whoami', org.adminKey, undefined], ['GET', '/v1/billing', org.adminKey, undefined],
    ['GET', '/v1/api-keys', org.adminKey, undefined], ['POST', '/v1/messages/send', send, mail(org, 'late@dest.example')]
  ] as const) {
    const res = await ob.request(method, path, { key, ...(body !== undefined ? { body } : {}) })
    assertError(res, 403, 'organization_suspended')
    assert.equal(res.body.error.details.organization_id, org.orgId)
  }
  // an operator route stays forbidden for its admin key
  assertError(await ob.request('GET', '/v1/operator/organizations', { key: org.adminKey }), 403, 'forbidden')
  // a session that authenticated before the suspension: its next transaction
  const inSession = await refusal(pooled.sendMail(mail(org, 'late@dest.example')))
  assert.equal(inSession.responseCode, 550, inSession.response)
  assert.match(inSession.response!, /^550 5\.7\.13 /)
  pooled.close()
  // a new session: at AUTH
  const atAuth = await refusal(submissionClient(port, send).sendMail(mail(org, 'late@dest.example')))
  assert.equal(atAuth.responseCode, 525, atAuth.response)
  assert.match(atAuth.response!, /^525 5\.7\.13 /)
  // mail accepted before the suspension leaves as normal
  await sink.until(() => sink.to('queued@dest.example').length === 1)
  assert.equal(sink.to('late@dest.example').length, 0)
  const listed = await call('GET', '?status=suspended&limit=100')
  assert.ok(listed.body.data.some((o: { id: string }) => o.id === org.orgId))

  const resumed = await call('POST', `/${org.orgId}/resume`)
  assert.equal(resumed.status, 200, resumed.text)
  assert.equal(resumed.body.status, 'active')
  assert.equal(resumed.body.suspended_at, undefined)
  assert.equal((await call('POST', `/${org.orgId}/resume`)).body.status, 'active', 'resuming twice changes nothing')
  assert.equal((await ob.request('GET', '/v1/whoami', { key: org.adminKey })).status, 200)
  const sent = await submissionClient(port, send).sendMail(mail(org, 'after@dest.example'))
  assert.match(sent.response, /^250 /)
  assert.equal((await ob.request('POST', '/v1/messages/send', { key: send, body: mail(org, 'after2@dest.example') })).status, 202)
  assertError(await call('POST', '/org_00000000000000000000000000/suspend'), 404, 'not_found')
})

/** A live event stream socket authenticated with `key`: resolves with the socket once it is ready, and its close. */
async function stream (key: string): Promise<{ ready: boolean, closed: Promise<number>, ws: WebSocket }> {
  const ws = new WebSocket(ob.baseUrl.replace('http', 'ws') + '/v1/events/stream')
  const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)))
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve())
    ws.addEventListener('error', () => reject(new Error('socket error')))
  })
  const first = new Promise<boolean>((resolve) => {
    ws.addEventListener('message', (m) => resolve((JSON.parse(String(m.data)) as { type: string }).type === 'ready'))
    void closed.then(() => resolve(false))
  })
  ws.send(JSON.stringify({ type: 'auth', key }))
  return { ready: await first, closed, ws }
}

test('the live event stream: an open socket closes with 4403 at the suspension, a new one is refused with 4403', async () => {
  const org = await ob.org()
  const read = await ob.key(org, ['read'])
  const open = await stream(read)
  assert.equal(open.ready, true)
  assert.equal((await call('POST', `/${org.orgId}/suspend`)).status, 200)
  assert.equal(await open.closed, 4403)
  const refused = await stream(read)
  assert.equal(refused.ready, false)
  assert.equal(await refused.closed, 4403)
  await call('POST', `/${org.orgId}/resume`)
  const again = await stream(read)
  assert.equal(again.ready, true)
  again.ws.close()
  await again.closed
})

test('reset-admin-key: a new admin key shown once, every old admin key refused, other keys untouched', async () => {
  const org = await ob.org()
  const second = await ob.key(org, ['admin'])
  const read = await ob.key(org, ['read'])
  const res = await call('POST', `/${org.orgId}/reset-admin-key`)
  assert.equal(res.status, 201, res.text)
  assert.match(res.body.api_key, /^ob_live_[A-Za-z0-9]{32}$/)
  assert.equal(res.body.domain_id, org.domainId)
  assert.equal(res.body.revoked.length, 2)
  for (const old of [org.adminKey, second]) {
    const r = await ob.request('GET', '/v1/whoami', { key: old })
    assertError(r, 401, 'unauthorized')
  }
  const fresh = await ob.request('GET', '/v1/billing', { key: res.body.api_key })
  assert.equal(fresh.status, 200, fresh.text)
  assert.equal((await ob.request('GET', '/v1/suppressions', { key: read })).status, 200)
  const keys = await ob.request('GET', '/v1/api-keys?limit=100', { key: res.body.api_key })
  const listed = keys.body.data.find((k: { id: string }) => k.id === res.body.api_key_id)
  assert.deepEqual({ name: listed.name, permissions: listed.permissions }, { name: 'admin', permissions: ['admin'] })
  assert.ok(!JSON.stringify((await call('GET', `/${org.orgId}`)).body).includes(res.body.api_key), 'the value is shown once')
  // on a suspended organisation the new key is refused like the others until it is resumed
  await call('POST', `/${org.orgId}/suspend`)
  const whileSuspended = await call('POST', `/${org.orgId}/reset-admin-key`)
  assert.equal(whileSuspended.status, 201, whileSuspended.text)
  assertError(await ob.request('GET', '/v1/whoami', { key: whileSuspended.body.api_key }), 403, 'organization_suspended')
  await call('POST', `/${org.orgId}/resume`)
  assert.equal((await ob.request('GET', '/v1/whoami', { key: whileSuspended.body.api_key })).status, 200)
})

test('delete: keys refused at once, the domain name free again, the organisation gone from the API', async () => {
  const org = await ob.org()
  const send = await ob.key(org, ['send'])
  await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url: 'https://hooks.example.com/y', events: ['bounced'] } })
  await ob.request('POST', '/v1/templates', { key: org.adminKey, body: { name: 't', subject: 's', html: '<p>x</p>' } })
  await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'no@dest.example' } })
  // a stream the reputation guard paused
  assert.ok(await ob.proc.cp.pauses.pause({
    kind: 'stream_pause', org_id: org.orgId, stream: 'transactional', reason: 'bounce_rate', paused_at: new Date().toISOString(),
    counts: { delivered: 2, hard_bounced: 2, complained: 0 }, rates: { volume: 4, bounce_rate: 0.5, complaint_rate: 0 }
  }))
  const res = await call('DELETE', `/${org.orgId}`)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, {
    organization_id: org.orgId,
    deleted: { api_keys: 2, webhooks: 1, inbound_routes: 0, templates: 1, suppressions: 1, domains: 1 }
  })
  for (const key of [org.adminKey, send]) assertError(await ob.request('GET', '/v1/whoami', { key }), 401, 'unauthorized')
  assert.equal((await refusal(submissionClient(port, send).sendMail(mail(org, 'x@dest.example')))).responseCode, 535)
  assertError(await call('GET', `/${org.orgId}`), 404, 'not_found')
  assertError(await call('DELETE', `/${org.orgId}`), 404, 'not_found')
  assert.equal(ob.proc.cp.webhooks.list(`${org.orgId}.`).length, 0)
  assert.deepEqual(ob.proc.cp.pauses.list(org.orgId), [], 'its pauses go with it')
  const again = await createOrganization(ob.proc.cp, ob.proc.config, { name: 'next', domain: org.domain, plan: 'free' })
  assert.notEqual(again.organization_id, org.orgId)
})

test('delete: mail it had queued fails without an attempt (domain_removed); its messages stay in the read model', async () => {
  const org = await ob.org()
  const events = await EventReader.open(ob.proc.nc, org.orgId)
  try {
    const queued = await ob.request('POST', '/v1/messages/send', {
      key: org.adminKey, body: { ...mail(org, 'orphan@dest.example'), scheduled_at: new Date(Date.now() + 2000).toISOString() }
    })
    assert.equal(queued.status, 202, queued.text)
    assert.equal((await call('DELETE', `/${org.orgId}`)).status, 200)
    const [failed] = await events.waitFor('failed', 1, 20_000)
    assert.equal((failed!.data as { failure_category: string }).failure_category, 'domain_removed')
    assert.equal(sink.to('orphan@dest.example').length, 0)
    const store = new MessageStore(ob.proc.redis)
    await eventually(async () => (await store.getMessage(org.orgId, queued.body.id as string)).status === 'failed', 'the read model')
  } finally {
    events.close()
  }
})

test('an organisation admin may lower its plan, never raise it (403 forbidden); the operator may', async () => {
  const org = await ob.org('pro')
  const raise = await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan: 'enterprise' } })
  assertError(raise, 403, 'forbidden')
  assert.deepEqual(raise.body.error.details, { plan: 'pro', requested: 'enterprise' })
  const same = await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan: 'pro' } })
  assert.deepEqual(same.body, { plan: 'pro', rate_limit_per_minute: 1000 })
  const lower = await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan: 'starter' } })
  assert.deepEqual(lower.body, { plan: 'starter', rate_limit_per_minute: 300 })
  assertError(await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan: 'pro' } }), 403, 'forbidden')
  assert.equal(ob.proc.cp.orgs.get(org.orgId)!.plan, 'starter')
  // an enterprise plan below pro's limit may not become pro (a raise of the limit)
  await call('PUT', `/${org.orgId}/plan`, { plan: 'enterprise', rate_limit_per_minute: 500 })
  assertError(await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan: 'pro' } }), 403, 'forbidden')
  const keep = await ob.request('PATCH', '/v1/billing', { key: org.adminKey, body: { plan: 'enterprise' } })
  assert.deepEqual(keep.body, { plan: 'enterprise', rate_limit_per_minute: 500 })
})

test('each change is one security line with the operator key and the organisation', async () => {
  const org = await ob.org()
  await call('PUT', `/${org.orgId}/plan`, { plan: 'starter' })
  await call('POST', `/${org.orgId}/suspend`)
  await call('POST', `/${org.orgId}/resume`)
  const reset = await call('POST', `/${org.orgId}/reset-admin-key`)
  await call('DELETE', `/${org.orgId}`)
  const lines = logs.flatMap((l) => l.split('\n')).filter((l) => l.includes('operator.organization_changed') && l.includes(org.orgId))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
  assert.deepEqual(lines.map((l) => l.change), ['plan_set', 'suspended', 'resumed', 'admin_key_reset', 'deleted'])
  for (const l of lines) {
    assert.equal(l.kind, 'security')
    assert.equal(l.operator_key_id, opId)
    assert.equal(l.org_id, org.orgId)
  }
  assert.equal(lines[0]!.plan, 'starter')
  assert.equal(lines[3]!.api_key_id, reset.body.api_key_id)
  assert.ok(!logs.join('').includes(reset.body.api_key), 'no key value in the log')
})
