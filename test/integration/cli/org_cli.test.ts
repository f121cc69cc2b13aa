import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { runCli } from '../../helpers/cli.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * `outbox org list|show|plan|suspend|resume|reset-admin-key|delete` and `outbox nats streams|consumers`, run as a user
 * runs them against the NATS of a running Outbox: what the CLI changes, the gateway applies to the organisation's
 * keys from the next request; bad input is exit status 2 with the usage, a missing organisation 1.
 */
let ob: TestOutbox
let org: TestOrg
let env: Record<string, string>
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('free')
  env = { NATS_URL: ob.nats.url }
})
after(async () => { await ob.close() })

async function cli (...args: string[]): Promise<any> {
  const r = await runCli(args, env)
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

const whoamiStatus = async (key: string): Promise<number> => (await ob.request('GET', '/v1/whoami', { key })).status

test('org list and show: plan, status and counts, as the operator API shows them', async () => {
  const list = await cli('org', 'list')
  const row = list.find((o: { id: string }) => o.id === org.orgId)
  assert.deepEqual({ plan: row.plan, status: row.status, counts: row.counts },
    { plan: 'free', status: 'active', counts: { api_keys: 1, domains: 1, webhooks: 0 } })
  const shown = await cli('org', 'show', org.orgId)
  assert.deepEqual(shown.domains, [{ id: org.domainId, name: org.domain, status: 'verified', egress_pool: null }])
  assert.deepEqual(await cli('org', 'list', '--status', 'suspended'), [])
})

test('org plan changes the limit of the organisation\'s next request', async () => {
  const set = await cli('org', 'plan', org.orgId, 'enterprise', '--rate-limit', '7000')
  assert.equal(set.rate_limit_per_minute, 7000)
  await eventually(async () =>
    (await ob.request('GET', '/v1/billing', { key: org.adminKey })).headers.get('ratelimit-limit') === '7000', 'the new limit')
  await cli('org', 'plan', org.orgId, 'starter')
  await eventually(async () =>
    (await ob.request('GET', '/v1/billing', { key: org.adminKey })).headers.get('ratelimit-limit') === '300', 'starter')
  const bad = await runCli(['org', 'plan', org.orgId, 'pro', '--rate-limit', '10'], env)
  assert.equal(bad.code, 2, bad.stderr)
  assert.match(bad.stderr, /rate_limit_per_minute is set only with the plan enterprise/)
  const unknownPlan = await runCli(['org', 'plan', org.orgId, 'platinum'], env)
  assert.equal(unknownPlan.code, 2)
  assert.match(unknownPlan.stderr, /usage: outbox org/)
})

test('org suspend refuses the keys, org resume lets them in again', async () => {
  assert.equal((await cli('org', 'suspend', org.orgId)).status, 'suspended')
  await eventually(async () => (await whoamiStatus(org.adminKey)) === 403, 'the suspension in the gateway')
  assert.equal((await cli('org', 'list', '--status', 'suspended')).length, 1)
  assert.equal((await cli('org', 'resume', org.orgId)).status, 'active')
  await eventually(async () => (await whoamiStatus(org.adminKey)) === 200, 'the resumption in the gateway')
})

test('org reset-admin-key prints a new key once; the old one stops', async () => {
  const other = await ob.org()
  const reset = await cli('org', 'reset-admin-key', other.orgId)
  assert.match(reset.api_key, /^ob_live_/)
  await eventually(async () => (await whoamiStatus(reset.api_key)) === 200, 'the new key in the gateway')
  await eventually(async () => (await whoamiStatus(other.adminKey)) === 401, 'the old key refused')
})

test('org delete needs --yes, then removes the organisation; a missing one is exit 1', async () => {
  const doomed = await ob.org()
  const refused = await runCli(['org', 'delete', doomed.orgId], env)
  assert.equal(refused.code, 2)
  assert.match(refused.stderr, /--yes/)
  const deleted = await cli('org', 'delete', doomed.orgId, '--yes')
  assert.equal(deleted.deleted.api_keys, 1)
  assert.equal(deleted.deleted.domains, 1)
  await eventually(async () => (await whoamiStatus(doomed.adminKey)) === 401, 'the deletion in the gateway')
  const missing = await runCli(['org', 'show', doomed.orgId], env)
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /^outbox: No organisation with id org_/)
  assert.equal((await runCli(['org', 'frobnicate'], env)).code, 2)
})

test('nats streams and consumers show counts, limits and consumer state, read-only', async () => {
  const streams = await cli('nats', 'streams')
  const outbound = streams.find((s: { name: string }) => s.name === 'OB_OUTBOUND')
  assert.ok(outbound !== undefined, JSON.stringify(streams.map((s: { name: string }) => s.name)))
  for (const field of ['messages', 'bytes', 'consumers', 'first_seq', 'last_seq']) assert.equal(typeof outbound[field], 'number', field)
  assert.equal(typeof outbound.limits.max_age_s, 'number')
  assert.ok(streams.some((s: { name: string }) => s.name === 'KV_ob_orgs'), 'the key-value buckets too')
  const consumers = await cli('nats', 'consumers', 'OB_EVENTS')
  assert.ok(consumers.length >= 1)
  for (const c of consumers) {
    assert.equal(c.stream, 'OB_EVENTS')
    for (const field of ['pending', 'ack_pending', 'redelivered']) assert.equal(typeof c[field], 'number', `${c.name as string} ${field}`)
  }
  const all = await cli('nats', 'consumers')
  assert.ok(all.length >= consumers.length)
  const missing = await runCli(['nats', 'consumers', 'NO_SUCH_STREAM'], env)
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /no stream named NO_SUCH_STREAM/)
  const before = streams.length
  assert.equal((await cli('nats', 'streams')).length, before, 'nothing created')
})

test('--help after a command prints its usage and exits 0, without touching anything', async () => {
  for (const [args, usage] of [
    [['org', 'create', '--help'], /^usage: outbox org create --name <name> --domain <domain>/],
    [['org', 'list', '-h'], /^usage: outbox org list/],
    [['egress', '--help'], /^usage: outbox egress source add/],
    [['start', '--help'], /^outbox: self-hosted transactional email/]
  ] as const) {
    const r = await runCli([...args], { NATS_URL: 'nats://127.0.0.1:1' }) // nothing answers there: help needs no NATS
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
    assert.match(r.stdout, usage, args.join(' '))
    assert.equal(r.stderr, '')
  }
})
