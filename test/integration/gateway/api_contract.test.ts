import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { OPENAPI, conformance } from '../../helpers/openapi_conformance.ts'
import { ROUTES } from '../../../gateway/routes/mod.ts'
import type { RouteDef } from '../../../gateway/http/route.ts'
import { isId, newId } from '../../../protocol/mod.ts'
import { queue } from '../readmodel/fixtures.ts'

/**
 * The API is as strict as its reference says, and the reference as strict as the API (docs/api.md, docs/errors.md):
 * every route refuses a query parameter it does not declare, naming it; a 405 lists exactly the methods of its path;
 * an enum error lists the allowed values; and real answers pass docs/openapi.json with its objects closed and its
 * required headers. Routes added later are walked without touching this file.
 */
let ob: TestOutbox
let org: TestOrg
let operatorKey: string
let messageId: string
before(async () => {
  ob = await TestOutbox.start()
  org = await ob.org('enterprise') // the walks never meet the per-key limit
  operatorKey = (await ob.proc.cp.operatorKeys.create('api contract')).value
  messageId = (await queue(ob, org)).id
})
after(async () => { await ob.close() })

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']
const methodOf = (def: RouteDef): string => def.method === 'del' ? 'DELETE' : def.method.toUpperCase()
const docPath = (def: RouteDef): string => def.path.replace(/:([A-Za-z_]+)/g, '{$1}')

/** A value of the shape the route takes for each path parameter, so the request gets past the shape checks. */
function concrete (def: RouteDef): string {
  return def.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => {
    if (name === 'id' && def.idPrefix !== undefined) return newId(def.idPrefix)
    const pattern = def.paramPatterns?.[name]
    if (pattern !== undefined) {
      const fit = [newId('dom'), 'default', 'a1', 'example.com'].find((v) => new RegExp(pattern).test(v))
      assert.ok(fit !== undefined, `no sample value for ${def.path} :${name}`)
      return fit
    }
    return name === 'email' ? 'nobody%40example.com' : 'x'
  })
}

/** Whether `def` answers `path` itself: the segments match, and each parameter has the shape it declares. */
function takes (def: RouteDef, path: string): boolean {
  const names = [...def.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!)
  const hit = new RegExp('^' + def.path.replace(/:[A-Za-z_]+/g, '([^/]+)') + '$').exec(path)
  if (hit === null) return false
  return names.every((name, i) => {
    const value = decodeURIComponent(hit[i + 1]!)
    if (name === 'id' && def.idPrefix !== undefined) return isId(def.idPrefix, value)
    const pattern = def.paramPatterns?.[name]
    return pattern === undefined || new RegExp(pattern).test(value)
  })
}

function keyFor (def: RouteDef): { key?: string } {
  return def.permission === null ? {} : { key: def.permission === 'operator' ? operatorKey : org.adminKey }
}

test('every route refuses an undeclared query parameter with 400 validation_error naming it, as its document says', async () => {
  const problems: string[] = []
  for (const def of ROUTES.filter((d) => d.ignoreUnknownQuery !== true)) {
    const method = methodOf(def)
    const r = await ob.request(method, `${concrete(def)}?bogus=1`, keyFor(def))
    const what = `${method} ${def.path}?bogus=1 → ${r.status} ${r.text.slice(0, 200)}`
    assert.equal(r.status, 400, what)
    assert.equal(r.body.error.code, 'validation_error', what)
    assert.equal(r.body.error.field, 'bogus', what)
    assert.equal(r.body.error.details.parameter, 'bogus', what)
    assert.match(r.body.error.message, /"bogus"/, what)
    problems.push(...conformance(OPENAPI, def.method === 'del' ? 'delete' : def.method, docPath(def), r))
  }
  assert.deepEqual(problems, [])
})

test('tracking links ignore what mail clients append; the certificate check does not', async () => {
  for (const def of ROUTES.filter((d) => d.ignoreUnknownQuery === true)) {
    const r = await ob.request(methodOf(def), `${concrete(def)}?utm_source=news&fbclid=1`)
    assert.equal(r.status, 404, `${def.path}: the forged token, not the parameters → ${r.status} ${r.text.slice(0, 200)}`)
  }
  const host = await ob.request('GET', '/t/host?domain=example.com&bogus=1')
  assert.equal(host.status, 400)
  assert.equal(host.body.error.details.parameter, 'bogus')
})

test('a 405 lists in Allow exactly the methods its path supports; OPTIONS is answered so too', async () => {
  const paths = new Map<string, { sample: RouteDef, methods: Set<string> }>()
  for (const def of ROUTES) {
    const entry = paths.get(def.path) ?? { sample: def, methods: new Set<string>() }
    entry.methods.add(methodOf(def))
    paths.set(def.path, entry)
  }
  for (const { sample, methods } of paths.values()) {
    const path = concrete(sample)
    // another template may take this path too (`DELETE /v1/suppressions/:email` takes /v1/suppressions/export)
    // when the value has the shape it wants
    for (const d of ROUTES) if (takes(d, path)) methods.add(methodOf(d))
    const expected = METHODS.filter((m) => methods.has(m)).join(', ')
    const others = METHODS.filter((m) => !methods.has(m))
    for (const m of [...others, 'OPTIONS']) {
      // a route of that method whose template fits the path with a value of the wrong shape is reached first (`GET
      // /v1/messages/send` reaches `GET /v1/messages/:id`): it too answers 405, after its key is checked
      const reached = ROUTES.find((d) => methodOf(d) === m && new RegExp('^' + d.path.replace(/:[A-Za-z_]+/g, '[^/]+') + '$').test(path))
      const r = await ob.request(m, path, keyFor(reached ?? sample))
      assert.equal(r.status, 405, `${m} ${path} → ${r.status}`)
      assert.equal(r.body.error.code, 'method_not_allowed')
      assert.equal(r.headers.get('allow'), expected, `${m} ${path}`)
      assert.ok(r.headers.get('x-request-id') !== null)
    }
  }
})

test('a value outside an enum is answered with the allowed values', async () => {
  const r = await ob.request('GET', '/v1/messages?status=lost', { key: org.adminKey })
  assert.equal(r.status, 400)
  assert.equal(r.body.error.code, 'validation_error')
  assert.match(r.body.error.message, /^status: must be one of "queued", /)
  assert.ok(r.body.error.errors[0].allowed.includes('delivered'), r.text)
  assert.deepEqual(conformance(OPENAPI, 'get', '/v1/messages', r), [])
})

test('POST /v1/messages/{id}/cancel takes no body: one sent is refused, none is answered as documented', async () => {
  const withBody = await ob.request('POST', `/v1/messages/${messageId}/cancel`, { key: org.adminKey, body: { reason: 'x' } })
  assert.equal(withBody.status, 400, withBody.text)
  assert.equal(withBody.body.error.field, 'body')
  const none = await ob.request('POST', `/v1/messages/${messageId}/cancel`, { key: org.adminKey })
  assert.equal(none.status, 409, none.text) // queued, not scheduled
  for (const r of [withBody, none]) assert.deepEqual(conformance(OPENAPI, 'post', '/v1/messages/{id}/cancel', r), [])
})

test('real answers of every GET route pass the document: declared status, required headers, closed bodies', async () => {
  const problems: string[] = []
  let checked = 0
  for (const def of ROUTES.filter((d) => d.method === 'get' && d.path !== '/v1/events/stream')) {
    const path = def.path === '/v1/messages/:id' || def.path === '/v1/messages/:id/content'
      ? def.path.replace(':id', messageId)
      : def.path === '/v1/domains/:id' || def.path === '/v1/domains/:id/dmarc'
        ? def.path.replace(':id', org.domainId)
        : def.path === '/t/host' ? '/t/host?domain=localhost' : concrete(def)
    const r = await ob.request('GET', path, keyFor(def))
    if (r.status < 400) checked++
    problems.push(...conformance(OPENAPI, 'get', docPath(def), r))
  }
  assert.deepEqual(problems, [])
  assert.ok(checked >= 20, `${checked} successful answers checked`)
})
