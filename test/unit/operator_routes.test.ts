import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ROUTES } from '../../gateway/routes/mod.ts'

test('the operator API is exactly the routes under /v1/operator/, each of permission operator and tag Operator', () => {
  const operator = ROUTES.filter((r) => r.permission === 'operator')
  assert.ok(operator.length >= 14, 'the operator routes are in the table')
  for (const r of ROUTES) {
    const under = r.path.startsWith('/v1/operator/')
    assert.equal(r.permission === 'operator', under, `${r.method} ${r.path}`)
    if (under) assert.equal(r.tag, 'Operator', r.path)
  }
})

test('every path parameter of an operator route is checked before a handler runs (id prefix or pattern)', () => {
  for (const r of ROUTES.filter((d) => d.permission === 'operator')) {
    for (const [, name] of r.path.matchAll(/:([A-Za-z_]+)/g)) {
      const checked = name === 'id' ? r.idPrefix !== undefined : r.paramPatterns?.[name!] !== undefined
      assert.ok(checked, `${r.path}: :${name!} is checked`)
      if (name !== 'id') assert.match(r.paramPatterns![name!]!, /^\^.*\$$/, `${r.path}: :${name!}'s pattern is anchored`)
    }
  }
})
