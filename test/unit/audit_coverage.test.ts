import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { ROUTES } from '../../gateway/routes/mod.ts'
import { AUDIT_EXEMPT, routeLabel } from '../../gateway/audit.ts'

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
