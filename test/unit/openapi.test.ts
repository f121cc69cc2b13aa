import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { ROUTES } from '../../gateway/routes/mod.ts'
import { ApiError, ERRORS } from '../../protocol/errors.ts'
import { errorCodes } from '../../scripts/openapi/error_codes.ts'
import { conformance } from '../helpers/openapi_conformance.ts'
import { generatedDocs } from '../../scripts/openapi.ts'
import { toJsonSchema, operationId, openApiPath } from '../../scripts/openapi/json_schema.ts'
import { Type } from 'typebox'

const ROOT = new URL('../../../', import.meta.url)
const docs = generatedDocs()
const doc = JSON.parse(docs.openapi) as { paths: Record<string, Record<string, any>>, components: { schemas: { Error: any } } }

test('the committed docs/openapi.json and docs/api.md equal the generated ones (run `npm run openapi` after changing routes)', () => {
  assert.equal(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8'), docs.openapi, 'docs/openapi.json is stale: npm run openapi')
  assert.equal(readFileSync(new URL('docs/api.md', ROOT), 'utf8'), docs.apiMarkdown, 'docs/api.md is stale: npm run openapi')
})

test('every route appears with its permission, security and standard errors', () => {
  const ids = new Set<string>()
  for (const def of ROUTES) {
    const method = def.method === 'del' ? 'delete' : def.method
    const op = doc.paths[openApiPath(def.path)]?.[method]
    assert.ok(op !== undefined, `${method} ${def.path} is missing`)
    assert.equal(op['x-permission'], def.permission)
    assert.ok(!ids.has(op.operationId), `duplicate operationId ${op.operationId}`)
    ids.add(op.operationId)
    for (const r of Object.values(op.responses) as any[]) assert.ok(r.headers['X-Request-Id'] !== undefined)
    if (def.permission === null) {
      assert.deepEqual(op.security, [])
    } else {
      assert.deepEqual(op.security, [{ bearer: [] }])
      for (const s of ['401', '403', '429']) assert.ok(op.responses[s] !== undefined, `${def.path} lacks ${s}`)
      assert.ok(op.responses['429'].headers['Retry-After'] !== undefined)
      if (def.unmetered !== true) assert.ok(op.responses['429'].headers['RateLimit-Limit'] !== undefined)
    }
    if (def.body !== undefined) assert.ok(op.requestBody.content['application/json'].schema !== undefined)
  }
  assert.equal(Object.values(doc.paths).reduce((n, p) => n + Object.keys(p).length, 0), ROUTES.length)
})

test('the Error schema lists exactly the codes of the error table', () => {
  assert.deepEqual(doc.components.schemas.Error.properties.error.properties.code.enum, Object.keys(ERRORS))
})

test('TypeBox markers are stripped; paths and operation ids are converted', () => {
  const schema = toJsonSchema(Type.Object({
    a: Type.Optional(Type.String({ maxLength: 3 })), b: Type.Union([Type.Literal('x'), Type.Literal('y')])
  }))
  assert.deepEqual(schema, {
    type: 'object',
    required: ['b'],
    properties: { a: { type: 'string', maxLength: 3 }, b: { anyOf: [{ type: 'string', const: 'x' }, { type: 'string', const: 'y' }] } }
  })
  assert.doesNotMatch(docs.openapi, /"~/)
  assert.equal(openApiPath('/v1/domains/:id/verify'), '/v1/domains/{id}/verify')
  assert.equal(operationId('del', '/v1/api-keys/:id'), 'deleteApiKeysById')
  assert.equal(operationId('get', '/healthz'), 'getHealthz')
})

/** Every object schema under `schema` with named properties: [where, schema]. */
function objectsOf (schema: any, at: string, out: Array<[string, any]> = []): Array<[string, any]> {
  if (Array.isArray(schema)) schema.forEach((s, i) => objectsOf(s, `${at}[${i}]`, out))
  else if (schema !== null && typeof schema === 'object') {
    if (schema.properties !== undefined && typeof schema.properties.type !== 'string') out.push([at, schema])
    for (const [k, v] of Object.entries(schema)) {
      if (k === 'properties' || k === 'patternProperties') for (const [n, s] of Object.entries(v as object)) objectsOf(s, `${at}.${n}`, out)
      else if (typeof v === 'object') objectsOf(v, `${at}/${k}`, out)
    }
  }
  return out
}

test('success bodies are closed: every object lists all its fields (additionalProperties: false) unless it is a map', () => {
  let checked = 0
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        const schema = r.content?.['application/json']?.schema
        if (Number(status) >= 400 || schema === undefined) continue
        for (const [at, o] of objectsOf(schema, `${method} ${path} ${status}`)) {
          checked++
          assert.ok(o.additionalProperties === false || o.patternProperties !== undefined || typeof o.additionalProperties === 'object',
            `${at} is open`)
        }
      }
    }
  }
  assert.ok(checked > 100, `${checked} objects`)
})

test('every response declares X-Request-Id as required, and every 429 Retry-After', () => {
  const headers = (doc as any).components.headers
  assert.equal(headers['X-Request-Id'].required, true)
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        assert.deepEqual(r.headers['X-Request-Id'], { $ref: '#/components/headers/X-Request-Id' }, `${method} ${path} ${status}`)
        if (status === '429') assert.ok(r.headers['Retry-After'] !== undefined, `${method} ${path} 429`)
      }
    }
  }
})

test('each error response narrows error.code to the codes of its status that the operation can answer', () => {
  for (const def of ROUTES) {
    const op = doc.paths[openApiPath(def.path)]![def.method === 'del' ? 'delete' : def.method]
    const codes = errorCodes(def)
    for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
      if (Number(status) < 400) continue
      const s = r.content['application/json'].schema
      const narrowed = (s.allOf ?? s.anyOf?.[1]?.allOf)?.[1]?.properties?.error?.properties?.code?.enum as string[] | undefined
      assert.ok(narrowed !== undefined && narrowed.length > 0, `${def.method} ${def.path} ${status} names its codes`)
      assert.deepEqual(narrowed, codes.get(Number(status)), `${def.method} ${def.path} ${status}`)
      for (const c of narrowed) assert.equal(ERRORS[c as keyof typeof ERRORS].status, Number(status), `${c} under ${status}`)
    }
    // every route answers an undeclared query parameter (or a body where it takes none) with validation_error
    if (def.ignoreUnknownQuery !== true) assert.ok(codes.get(400)?.includes('validation_error'), `${def.method} ${def.path} 400`)
  }
})

test('each code a route module throws by name is among the codes of one of its operations', async () => {
  const dir = new URL('gateway/routes/', ROOT)
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'mod.ts')) {
    const mod = await import(new URL(`../../gateway/routes/${file.replace(/\.ts$/, '.js')}`, import.meta.url).href) as Record<string, unknown>
    const defs = Object.values(mod).filter(Array.isArray).flat().filter((d: any) => d?.path !== undefined && d?.handler !== undefined)
    const declared = new Set(defs.flatMap((d: any) => [...errorCodes(d).values()].flat()))
    const thrown = [...readFileSync(new URL(file, dir), 'utf8').matchAll(/new ApiError\('([a-z_]+)'/g)].map((m) => m[1]!)
    for (const code of thrown) assert.ok(declared.has(code as never), `${file} throws ${code}, which none of its operations declares`)
  }
})

test('the document holds no keyword of our own (errorMessage goes out as x-error-message) and every tag is described', () => {
  assert.doesNotMatch(docs.openapi, /"errorMessage"/)
  assert.match(docs.openapi, /"x-error-message"/)
  for (const t of (doc as any).tags) assert.ok(t.description.length > 0, `tag ${t.name}`)
  const listed = new Set((doc as any).tags.map((t: { name: string }) => t.name))
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const op of Object.values(item as Record<string, { tags?: string[] }>)) {
      for (const tag of op.tags ?? []) assert.ok(listed.has(tag), `${path}: tag ${tag} is not in the document's tag list`)
    }
  }
})

test('a POST that declares no body has none in the document; every operation but the WebSocket and the click redirect has a 2xx', () => {
  assert.equal(doc.paths['/v1/messages/{id}/cancel']!.post.requestBody, undefined)
  for (const [path, ops] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (path === '/v1/events/stream' || path === '/t/c/{token}') continue
      assert.ok(Object.keys(op.responses).some((s) => s.startsWith('2')), `${method} ${path} has no 2xx`)
    }
  }
})

test('the check of real answers refuses an undeclared field, a code the operation does not answer, a missing X-Request-Id', () => {
  const published = JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8'))
  const headers = (h: Record<string, string>) => ({ get: (n: string) => h[n.toLowerCase()] ?? null })
  const json = { 'content-type': 'application/json', 'x-request-id': 'req_1' }
  const err = new ApiError('validation_error', 'Unknown query parameter "bogus"', { details: { parameter: 'bogus' } }).toJSON('req_1')
  assert.deepEqual(conformance(published, 'get', '/v1/api-keys', { status: 400, headers: headers(json), body: err }), [])
  const wrongCode = new ApiError('conflict').toJSON('req_1')
  assert.equal(conformance(published, 'get', '/v1/api-keys', { status: 400, headers: headers(json), body: wrongCode }).length, 1)
  const who = {
    key_id: 'key_1', key_name: 'k', permissions: ['read'], environment: 'live', organization_id: 'org_1', domain_id: 'dom_1',
    domain: 'example.com', plan: 'free', rate_limit_per_minute: 60
  }
  assert.deepEqual(conformance(published, 'get', '/v1/whoami', { status: 200, headers: headers(json), body: who }), [])
  const extra = { status: 200, headers: headers(json), body: { ...who, secret: 'x' } }
  assert.equal(conformance(published, 'get', '/v1/whoami', extra).length, 1)
  const plain = headers({ 'content-type': 'application/json' })
  const noId = conformance(published, 'get', '/v1/api-keys', { status: 400, headers: plain, body: err })
  assert.match(noId.join(), /no X-Request-Id/)
})
