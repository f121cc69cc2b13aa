import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { ROUTES } from '../../gateway/routes/mod.ts'
import { ERRORS } from '../../protocol/errors.ts'
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
