import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { ROUTES } from '../../../gateway/routes/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { runCli } from '../../helpers/cli.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * The operator role: a key made with the CLI reaches the operator API; organisation keys, admin included, never do
 * (403 forbidden on every operator route of the table), and an operator key is nobody on organisation routes.
 */
let ob: TestOutbox
let org: TestOrg
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org()
})
after(async () => { await ob.close() })

const operatorRoutes = ROUTES.filter((r) => r.permission === 'operator')
const method = (r: (typeof ROUTES)[number]): string => r.method === 'del' ? 'DELETE' : r.method.toUpperCase()
/** A path of the route whose parameters have the right shape, so nothing but the key decides the answer. */
function pathOf (r: (typeof ROUTES)[number]): string {
  return r.path.replace(':id', org.orgId).replace(':domain_id', org.domainId).replace(':name', 'nothing-here')
}

test('a key from `outbox operator key create` works on the operator API at once; list never shows it', async () => {
  const env = { NATS_URL: ob.nats.url }
  const made = await runCli(['operator', 'key', 'create', '--name', 'deploy'], env)
  assert.equal(made.code, 0, made.stderr)
  const created = JSON.parse(made.stdout) as { id: string, key: string }
  assert.deepEqual(Object.keys(created).sort(), ['id', 'key'])
  assert.match(created.key, /^ob_op_[A-Za-z0-9]{32,}$/)
  assert.match(created.id, /^opk_[0-9a-z]{26}$/)
  const pools = await eventually(async () => {
    const r = await ob.request('GET', '/v1/operator/egress/pools', { key: created.key })
    return r.status === 200 ? r : undefined
  }, 'the new key to reach the gateway')
  assert.deepEqual(pools.body, { data: [{ name: 'default', sources: [], implicit: true }] })
  assert.equal(pools.headers.get('ratelimit-limit'), '600')

  const listed = await runCli(['operator', 'key', 'list'], env)
  assert.equal(listed.code, 0, listed.stderr)
  assert.ok(!listed.stdout.includes(created.key), 'the value is never listed')
  assert.doesNotMatch(listed.stdout, /hash/)
  const rows = JSON.parse(listed.stdout) as Array<Record<string, unknown>>
  const row = rows.find((k) => k.id === created.id)!
  assert.equal(row.name, 'deploy')
  assert.equal(row.prefix, created.key.slice(0, 12))
  assert.equal(typeof row.created_at, 'string')
})

test('an organisation admin key is 403 forbidden on every operator route of the table', async () => {
  assert.ok(operatorRoutes.length >= 14)
  const walked = new Set(operatorRoutes.map((r) => `${method(r)} ${r.path}`))
  for (const r of ['GET /v1/operator/organizations', 'GET /v1/operator/organizations/:id', 'PUT /v1/operator/organizations/:id/plan',
    'POST /v1/operator/organizations/:id/suspend', 'POST /v1/operator/organizations/:id/resume',
    'POST /v1/operator/organizations/:id/reset-admin-key', 'DELETE /v1/operator/organizations/:id']) {
    assert.ok(walked.has(r), `${r} is walked`)
  }
  for (const r of operatorRoutes) {
    const hasBody = r.method === 'post' || r.method === 'patch' || r.method === 'put'
    const res = await ob.request(method(r), pathOf(r), { key: org.adminKey, ...(hasBody ? { body: {} } : {}) })
    assert.equal(res.status, 403, `${method(r)} ${r.path}: ${res.text}`)
    assert.equal(res.body.error.code, 'forbidden', r.path)
  }
  // and no key at all is the 401 of any authenticated route
  const none = await ob.request('GET', '/v1/operator/egress/sources')
  assert.equal(none.status, 401)
  assert.equal(none.body.error.code, 'unauthorized')
})

test('an operator key on organisation routes is 401, as any unknown key', async () => {
  const { value } = await ob.proc.cp.operatorKeys.create('org routes')
  for (const [m, path] of [['GET', '/v1/whoami'], ['GET', '/v1/billing'], ['GET', '/v1/api-keys'], ['GET', '/v1/webhooks']] as const) {
    const res = await ob.request(m, path, { key: value })
    assert.equal(res.status, 401, `${m} ${path}: ${res.text}`)
    assert.equal(res.body.error.code, 'unauthorized')
  }
  const send = await ob.request('POST', '/v1/messages/send', {
    key: value, body: { from: `a@${org.domain}`, to: 'b@example.com', subject: 's', text: 't' }
  })
  assert.equal(send.status, 401)
})

test('a revoked operator key is refused from the next request on; an unknown one is 401', async () => {
  const env = { NATS_URL: ob.nats.url }
  const created = JSON.parse((await runCli(['operator', 'key', 'create'], env)).stdout) as { id: string, key: string }
  await eventually(async () => (await ob.request('GET', '/v1/operator/egress/limits', { key: created.key })).status === 200, 'key usable')
  const revoked = await runCli(['operator', 'key', 'revoke', created.id], env)
  assert.equal(revoked.code, 0, revoked.stderr)
  assert.equal(typeof (JSON.parse(revoked.stdout) as { revoked_at?: string }).revoked_at, 'string')
  const res = await eventually(async () => {
    const r = await ob.request('GET', '/v1/operator/egress/limits', { key: created.key })
    return r.status === 401 ? r : undefined
  }, 'the revocation to reach the gateway')
  assert.match(res.body.error.message, /revoked/)
  const unknown = await ob.request('GET', '/v1/operator/egress/limits', { key: 'ob_op_' + 'x'.repeat(32) })
  assert.equal(unknown.status, 401)
  const missing = await runCli(['operator', 'key', 'revoke', 'opk_nothing'], env)
  assert.equal(missing.code, 1)
  assert.match(missing.stderr, /no operator key opk_nothing/)
})
