import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { hostname, userInfo } from 'node:os'
import { jetstreamManager } from '@nats-io/jetstream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { runCli } from '../../helpers/cli.ts'
import { eventually } from '../../helpers/waiting.ts'
import { STREAM_AUDIT, auditSubject } from '../../../protocol/mod.ts'

/**
 * Changes made with the operator's command line are in the audit log as their operator routes record them: the same
 * action, target and changes, a change to one organisation in that organisation's log (read with its own key), a
 * change to the installation in the operator's; the actor is the local user through the command line, the address
 * the host it ran on; no key value reaches the stream.
 */
let ob: TestOutbox
let org: TestOrg
let viaApi: TestOrg
let op: string
let env: Record<string, string>
const CLI_ACTOR = { type: 'operator', id: `cli:${userInfo().username}`, via: 'cli' }

before(async () => {
  ob = await TestOutbox.start({ env: { OB_ROLE: 'gateway' } })
  org = await ob.org()
  viaApi = await ob.org()
  op = (await ob.proc.cp.operatorKeys.create('reader')).value
  env = { NATS_URL: ob.nats.url }
})
after(async () => { await ob.close() })

interface Entry {
  id: string, org_id: string | null, actor: Record<string, unknown>, address: string, at: string, action: string,
  target: string | null, changes: Record<string, any>, count: number, request_id: string
}

async function cli (...args: string[]): Promise<any> {
  const r = await runCli(args, env)
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`)
  assert.doesNotMatch(r.stderr, /audit\.unrecorded/, 'the entry is stored')
  return JSON.parse(r.stdout)
}

/** Every entry of a log, newest first; waits until the key reaches the gateway (a new key, an organisation resumed). */
async function entries (key: string, path = '/v1/audit-log', query = ''): Promise<Entry[]> {
  return await eventually(async () => {
    const r = await ob.request('GET', `${path}?limit=100${query}`, { key })
    return r.status === 200 ? r.body.data as Entry[] : undefined
  }, `${path} to answer 200`)
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

const shape = (e: Entry | undefined): unknown => e === undefined ? undefined : { action: e.action, target: e.target, changes: e.changes }

test('organisation changes made with the CLI are in that organisation\'s log, as the operator API records them', async () => {
  await cli('org', 'plan', org.orgId, 'starter')
  await cli('org', 'suspend', org.orgId)
  await cli('org', 'resume', org.orgId)
  await cli('egress', 'source', 'add', 'cli1', '--address', '192.0.2.81', '--ehlo', 'cli1.example.com')
  await cli('egress', 'pool', 'set', 'clipool', 'cli1:50')
  await cli('egress', 'assign', '--org', org.orgId, '--pool', 'clipool')
  await cli('egress', 'assign', '--org', org.orgId, '--domain', org.domainId, '--inherit')

  const log = [...await entries(org.adminKey)].reverse()
  assert.deepEqual(log.map((e) => e.action), [
    'organization.plan_set', 'organization.suspended', 'organization.resumed', 'organization.egress_pool_set', 'domain.egress_pool_set'
  ])
  for (const e of log) {
    assert.deepEqual(e.actor, CLI_ACTOR, e.action)
    assert.equal(e.address, hostname(), e.action)
    assert.equal(e.org_id, org.orgId, e.action)
    assert.equal(e.count, 1)
    assert.match(e.request_id, /^req_[0-9a-z]{26}$/)
  }
  assert.equal(new Set(log.map((e) => e.request_id)).size, log.length, 'a request id per command run')
  assert.deepEqual(log.map(shape), [
    { action: 'organization.plan_set', target: null, changes: { plan: 'starter' } },
    { action: 'organization.suspended', target: null, changes: {} },
    { action: 'organization.resumed', target: null, changes: {} },
    { action: 'organization.egress_pool_set', target: null, changes: { pool: 'clipool' } },
    { action: 'domain.egress_pool_set', target: org.domainId, changes: { pool: null } }
  ])

  // the same changes through the operator API make entries of the same shape
  const put = async (path: string, body: unknown): Promise<void> => {
    const r = await ob.request('PUT', `/v1/operator/organizations/${viaApi.orgId}${path}`, { key: op, body })
    assert.equal(r.status, 200, r.text)
  }
  await put('/plan', { plan: 'starter' })
  await put('/egress-pool', { pool: 'clipool' })
  await put(`/domains/${viaApi.domainId}/egress-pool`, { pool: null })
  const api = [...await entries(viaApi.adminKey)].reverse()
  assert.deepEqual(api.map(shape), [
    { action: 'organization.plan_set', target: null, changes: { plan: 'starter' } },
    { action: 'organization.egress_pool_set', target: null, changes: { pool: 'clipool' } },
    { action: 'domain.egress_pool_set', target: viaApi.domainId, changes: { pool: null } }
  ])
  assert.equal(api[0]!.actor.type, 'operator')
  assert.match(String(api[0]!.actor.id), /^opk_/)

  const installation = await entries(op, '/v1/operator/audit-log')
  const created = installation.find((e) => e.action === 'egress.source_created')
  assert.deepEqual(shape(created),
    { action: 'egress.source_created', target: 'cli1', changes: { address: '192.0.2.81', ehlo: 'cli1.example.com' } })
  assert.deepEqual(created!.actor, CLI_ACTOR)
  assert.equal(created!.org_id, null)
  assert.deepEqual(shape(installation.find((e) => e.action === 'egress.pool_set')),
    { action: 'egress.pool_set', target: 'clipool', changes: { sources: [{ source: 'cli1', weight: 50 }] } })
  assert.ok(!installation.some((e) => e.org_id !== null), 'the operator\'s log holds the installation\'s changes only')
})

test('keys made with the CLI are recorded by id, never by value; the operator filters by the CLI user', async () => {
  const made = await cli('operator', 'key', 'create', '--name', 'deploy')
  await cli('operator', 'key', 'revoke', made.id)
  const rotated = await cli('verp-keys', 'rotate')

  const installation = await entries(op, '/v1/operator/audit-log', `&actor=${encodeURIComponent(CLI_ACTOR.id)}`)
  const keyEntries = installation.filter((e) => e.action.startsWith('operator_key.') || e.action.startsWith('verp_key.')).reverse()
  assert.deepEqual(keyEntries.map(shape), [
    { action: 'operator_key.created', target: made.id, changes: { name: 'deploy' } },
    { action: 'operator_key.revoked', target: made.id, changes: {} },
    { action: 'verp_key.rotated', target: rotated.id, changes: {} }
  ])
  for (const e of installation) assert.deepEqual(e.actor, CLI_ACTOR, 'the filter keeps the CLI user\'s changes only')
  assert.ok(!(await rawStreamText('operator')).includes(made.key), 'the operator key is not in the stream')

  // a new organisation, then its admin key reset: both in its own log, read with the key the reset printed
  const domain = `cli${process.pid}.test`
  const created = await cli('org', 'create', '--name', 'Acme', '--domain', domain)
  const reset = await cli('org', 'reset-admin-key', created.organization_id)
  const log = await entries(reset.api_key)
  assert.deepEqual(log.map(shape), [
    {
      action: 'organization.admin_key_reset',
      target: null,
      changes: { api_key_id: reset.api_key_id, revoked_api_key_ids: reset.revoked }
    },
    {
      action: 'organization.created',
      target: null,
      changes: { name: 'Acme', plan: 'free', domain, domain_id: created.domain_id }
    }
  ])
  for (const e of log) assert.deepEqual({ actor: e.actor, org: e.org_id }, { actor: CLI_ACTOR, org: created.organization_id })
  const raw = await rawStreamText(created.organization_id)
  assert.ok(!raw.includes(created.api_key), 'the first admin key is not in the stream')
  assert.ok(!raw.includes(reset.api_key), 'the new admin key is not in the stream')
})
