import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { ROUTES } from '../../gateway/routes/mod.ts'
import { AUDIT_EXEMPT, routeLabel } from '../../gateway/audit.ts'
import { auditEntryOf, emptyNote, type ChangeOrigin } from '../../gateway/audit_entry.ts'
import { CLI_ACTIONS, CLI_ROUTES, routeOf, type RoutedCommand } from '../../cli/audit_trail.ts'

const CHANGES = new Set(['post', 'patch', 'put', 'del'])

test('every route that changes data is audited, or exempt with a reason', () => {
  const missing: string[] = []
  for (const r of ROUTES) {
    if (!CHANGES.has(r.method)) continue
    const label = routeLabel(r)
    const exempt = AUDIT_EXEMPT[label]
    if (r.audit === undefined && exempt === undefined) missing.push(label)
    assert.ok(!(r.audit !== undefined && exempt !== undefined), `${label} is audited and exempt at once`)
    if (exempt !== undefined) assert.ok(exempt.length > 5, `${label}: the exemption says why`)
  }
  assert.deepEqual(missing, [], 'routes that change data with no audit declaration and no exemption')
})

test('every exemption names a route of the table that changes data', () => {
  const labels = new Set(ROUTES.filter((r) => CHANGES.has(r.method)).map(routeLabel))
  for (const label of Object.keys(AUDIT_EXEMPT)) assert.ok(labels.has(label), `${label} is a route that changes data`)
})

test('no route that only reads declares an audit entry', () => {
  for (const r of ROUTES) if (r.method === 'get') assert.equal(r.audit, undefined, routeLabel(r))
})

test('docs/audit-log.md lists every action and every exempt route', () => {
  const doc = readFileSync(new URL('../../../docs/audit-log.md', import.meta.url), 'utf8')
  for (const r of ROUTES) {
    if (r.audit !== undefined) assert.ok(doc.includes(`\`${r.audit.action}\``), `${r.audit.action} is in docs/audit-log.md`)
  }
  for (const label of Object.keys(AUDIT_EXEMPT)) assert.ok(doc.includes(`\`${label}\``), `${label} is in docs/audit-log.md`)
})

test('every command line change names an audited operator route, or an action of its own', () => {
  const routeActions = new Set(ROUTES.flatMap((r) => r.audit === undefined ? [] : [r.audit.action]))
  for (const command of Object.keys(CLI_ROUTES) as RoutedCommand[]) {
    const route = routeOf(command)
    assert.ok(route !== undefined, `outbox ${command}: ${CLI_ROUTES[command]} is an operator route`)
    assert.equal(route.permission, 'operator', command)
    assert.ok(route.audit !== undefined, `${CLI_ROUTES[command]} declares its audit entry`)
  }
  for (const [command, action] of Object.entries(CLI_ACTIONS)) {
    assert.ok(!routeActions.has(action), `outbox ${command}: ${action} is no route's action, so no route does this change`)
  }
})

test('docs/audit-log.md names each command line change in the row of its action', () => {
  const doc = readFileSync(new URL('../../../docs/audit-log.md', import.meta.url), 'utf8')
  const rowOf = (action: string): string => doc.split('\n').find((l) => l.startsWith(`| \`${action}\` |`)) ?? ''
  const pairs: Array<[string, string]> = [
    ...(Object.keys(CLI_ROUTES) as RoutedCommand[]).map((c): [string, string] => [c, routeOf(c)!.audit!.action]),
    ...Object.entries(CLI_ACTIONS)
  ]
  for (const [command, action] of pairs) {
    assert.ok(rowOf(action).includes(`\`outbox ${command}\``), `the row of ${action} names \`outbox ${command}\``)
  }
})

test('a command line entry is its route\'s entry, with the command line as actor', () => {
  const origin: ChangeOrigin = { actor: { type: 'operator', id: 'cli:alice', via: 'cli' }, address: 'mx1', requestId: 'req_1' }
  const plan = routeOf('org plan')!
  const entry = auditEntryOf(plan, plan.audit!, { params: { id: 'org_1' }, body: { plan: 'pro' }, reply: {} }, emptyNote(), origin)
  assert.deepEqual(entry, {
    org_id: 'org_1',
    actor: { type: 'operator', id: 'cli:alice', via: 'cli' },
    address: 'mx1',
    action: 'organization.plan_set',
    target: null,
    changes: { plan: 'pro' },
    count: 1,
    request_id: 'req_1'
  })
  const limits = routeOf('egress limits set')!
  const installation = auditEntryOf(limits, limits.audit!, { params: {}, body: { limits: {} }, reply: {} }, emptyNote(), origin)
  assert.equal(installation.org_id, null, 'a change to the installation is in the operator\'s log')
  const stream = routeOf('egress assign --stream')!
  const assigned = auditEntryOf(stream, stream.audit!, { params: { id: 'org_1', stream: 'news' }, body: { pool: null }, reply: {} },
    emptyNote(), origin)
  assert.deepEqual({ org: assigned.org_id, target: assigned.target, changes: assigned.changes },
    { org: 'org_1', target: 'news', changes: { pool: null } })
})
