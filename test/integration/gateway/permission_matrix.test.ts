import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { PERMISSIONS, type Permission } from '../../../protocol/mod.ts'
import { ROUTES } from '../../../gateway/routes/mod.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'

/**
 * Every route of the table that needs a permission, called with a key holding each single permission:
 * 403 forbidden exactly when the key lacks it (admin holds all), and never 401 or 5xx. Routes added later
 * are covered without touching this file. Placeholder ids make a permitted call end in 404 or 400 at worst.
 */
let ob: TestOutbox
let org: TestOrg
const keys = new Map<Permission, string>()
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('enterprise') // the operator's default enterprise limit: the matrix never meets the rate limit
  for (const p of PERMISSIONS) keys.set(p, await ob.key(org, [p]))
})
after(async () => { await ob.close() })

function placeholder (param: string): string {
  if (/email|address/i.test(param)) return 'nobody%40example.com'
  return 'zz_00000000000000000000000000'
}

// Operator routes take no organisation key at all (test/integration/control/operator_keys.test.ts covers them).
const guarded = ROUTES.filter((r) => r.permission !== null && r.permission !== 'operator')

test('the route table has permission-guarded routes for every permission', () => {
  const used = new Set(guarded.map((r) => r.permission))
  for (const p of ['read', 'manage', 'admin'] as const) assert.ok(used.has(p), p)
})

for (const r of guarded) {
  const method = r.method === 'del' ? 'DELETE' : r.method.toUpperCase()
  const path = r.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => placeholder(name))
  test(`${method} ${r.path} needs ${r.permission}`, async () => {
    for (const p of PERMISSIONS) {
      const allowed = p === 'admin' || p === r.permission
      const hasBody = method === 'POST' || method === 'PATCH' || method === 'PUT'
      const res = await ob.request(method, path, { key: keys.get(p)!, ...(hasBody ? { body: {} } : {}) })
      const what = `${method} ${path} with a ${p} key → ${res.status} ${res.text.slice(0, 200)}`
      assert.ok(res.status < 500, what)
      assert.notEqual(res.status, 401, what)
      if (allowed) {
        assert.notEqual(res.status, 403, what)
      } else {
        assert.equal(res.status, 403, what)
        assert.equal(res.body.error.code, 'forbidden', what)
      }
    }
  })
}
