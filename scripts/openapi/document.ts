import type { RouteDef } from '../../gateway/http/route.ts'
import { ERRORS } from '../../protocol/mod.ts'
import { toJsonSchema, openApiPath, pathParams, httpMethod, operationId, type JsonSchema } from './json_schema.ts'

const ERROR_REF = { $ref: '#/components/schemas/Error' }

/** The error body every failure uses; its codes come from the one error table. */
export function errorSchema (): JsonSchema {
  return {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'request_id'],
        properties: {
          code: { type: 'string', enum: Object.keys(ERRORS), description: 'Machine-readable code; see docs/errors.md' },
          message: { type: 'string', description: 'Human-readable explanation' },
          field: { type: 'string', description: 'The field that caused the error, when one did' },
          details: { type: 'object', description: 'Extra context, for example the received value and what was expected' },
          errors: {
            type: 'array',
            description: 'Validation errors only: one entry per invalid field',
            items: {
              type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } }
            }
          },
          retry_after: { type: 'integer', minimum: 1, description: 'Rate limiting only: seconds until one request is allowed' },
          request_id: { type: 'string', description: 'Same value as the X-Request-Id response header' }
        }
      }
    }
  }
}

function codesFor (status: number): string {
  return Object.entries(ERRORS).filter(([, e]) => e.status === status).map(([code]) => `\`${code}\``).join(', ')
}

const STANDARD_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid parameters or body',
  401: 'Missing, malformed, unknown, revoked or expired API key',
  403: 'The key lacks the permission, or the resource belongs to another organisation',
  404: 'The resource does not exist',
  409: 'The resource already exists or is being changed',
  413: 'The body is larger than 10 MB',
  422: 'Well-formed but cannot be carried out',
  429: 'Rate limit exceeded; wait `Retry-After` seconds',
  500: 'Failure on the service side',
  503: 'Shutting down, NATS/Redis unavailable, or Redis full; retry later'
}

/** Which standard error statuses a route can answer with, besides the ones it declares itself. */
export function standardErrorStatuses (def: RouteDef): number[] {
  const out = new Set<number>([500, 503])
  if (def.body !== undefined || def.query !== undefined) out.add(400)
  if (def.body !== undefined) out.add(413)
  if (pathParams(def.path).length > 0) out.add(404)
  if (def.permission !== null) { out.add(401); out.add(403); out.add(429) }
  for (const s of Object.keys(def.responses).map(Number)) if (s >= 400) out.add(s)
  return [...out].sort((a, b) => a - b)
}

function responseHeaders (def: RouteDef, status: number): Record<string, unknown> {
  const headers: Record<string, unknown> = { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } }
  // Rate-limit headers are set once the key is authenticated and metered.
  if (def.permission !== null && def.unmetered !== true && ![401, 403, 503].includes(status)) {
    for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) headers[h] = { $ref: `#/components/headers/${h}` }
  }
  if (status === 429 || status === 503) headers['Retry-After'] = { $ref: '#/components/headers/Retry-After' }
  return headers
}

/** What the description says about the key a route takes. */
export function permissionText (def: RouteDef): string {
  if (def.permission === null) return 'No API key needed.'
  if (def.permission === 'operator') {
    return 'Requires an operator key (`ob_op_…`); organisation keys, `admin` included, get 403 `forbidden`.'
  }
  return `Requires the \`${def.permission}\` permission (or \`admin\`); a key of a suspended organisation gets 403 ` +
    '`organization_suspended`.'
}

function operation (def: RouteDef): Record<string, unknown> {
  const op: Record<string, unknown> = {
    operationId: operationId(def.method, def.path),
    summary: def.summary,
    tags: [def.tag]
  }
  const permissionNote = permissionText(def)
  op.description = def.description === undefined ? permissionNote : `${def.description}\n\n${permissionNote}`
  op.security = def.permission === null ? [] : [{ bearer: [] }]
  op['x-permission'] = def.permission
  const parameters: unknown[] = pathParams(def.path).map((name) => name === 'id' && def.idPrefix !== undefined
    ? {
        name,
        in: 'path',
        required: true,
        schema: { type: 'string', pattern: `^${def.idPrefix}_[0-9a-z]{26}$` },
        description: 'Any other shape is 404 `not_found`.'
      }
    : def.paramPatterns?.[name] !== undefined
      ? {
          name,
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: def.paramPatterns[name] },
          description: 'Any other shape is 404 `not_found`.'
        }
      : { name, in: 'path', required: true, schema: { type: 'string' } })
  if (def.query !== undefined) {
    const q = toJsonSchema(def.query) as { properties?: Record<string, JsonSchema>, required?: string[] }
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      const p: Record<string, unknown> = { name, in: 'query', required: (q.required ?? []).includes(name), schema }
      if (typeof schema.description === 'string') p.description = schema.description
      parameters.push(p)
    }
  }
  if (parameters.length > 0) op.parameters = parameters
  if (def.body !== undefined) op.requestBody = { required: true, content: { 'application/json': { schema: toJsonSchema(def.body) } } }
  const responses: Record<string, unknown> = {}
  const statuses = new Set([...Object.keys(def.responses).map(Number), ...standardErrorStatuses(def)])
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const declared = def.responses[status]
    const r: Record<string, unknown> = {}
    if (declared !== undefined) {
      r.description = declared.description
    } else {
      const codes = codesFor(status)
      r.description = STANDARD_DESCRIPTIONS[status]! + (codes === '' ? '' : ` (${codes})`)
    }
    r.headers = responseHeaders(def, status)
    if (declared?.schema !== undefined) r.content = { 'application/json': { schema: toJsonSchema(declared.schema) } }
    else if (status >= 400) r.content = { 'application/json': { schema: ERROR_REF } }
    responses[String(status)] = r
  }
  op.responses = responses
  return op
}

/** The OpenAPI 3.1 document of a route table. */
export function buildOpenApi (routes: readonly RouteDef[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {}
  const tags: string[] = []
  for (const def of routes) {
    const p = (paths[openApiPath(def.path)] ??= {})
    p[httpMethod(def.method)] = operation(def)
    if (!tags.includes(def.tag)) tags.push(def.tag)
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Outbox API',
      version,
      description: 'Self-hosted transactional email. Errors use one format (see the Error schema); every response carries X-Request-Id. ' +
        'Generated from the route table by `npm run openapi`.'
    },
    servers: [{ url: 'http://127.0.0.1:8080', description: 'Default OB_HTTP_HOST:OB_HTTP_PORT' }],
    tags: tags.map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key: `Authorization: Bearer ob_live_…` (or `ob_test_…` for sandbox keys); ' +
            'on the operator API (`/v1/operator/…`) an operator key, `ob_op_…`'
        }
      },
      schemas: { Error: errorSchema() },
      headers: {
        'X-Request-Id': { description: 'Request identifier; a valid incoming X-Request-Id is echoed', schema: { type: 'string' } },
        'RateLimit-Limit': {
          description: 'Requests per minute allowed for this key (the plan value; 600 for an operator key)', schema: { type: 'integer' }
        },
        'RateLimit-Remaining': { description: 'Requests that may be made right now', schema: { type: 'integer' } },
        'RateLimit-Reset': { description: 'Seconds until the bucket is full again', schema: { type: 'integer' } },
        'Retry-After': { description: 'Seconds to wait before retrying (at least 1)', schema: { type: 'integer', minimum: 1 } }
      }
    }
  }
}
