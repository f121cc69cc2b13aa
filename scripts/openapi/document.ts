import type { RouteDef } from '../../gateway/http/route.ts'
import { ERRORS } from '../../protocol/mod.ts'
import { toJsonSchema, openApiPath, pathParams, httpMethod, operationId, closeObjects, type JsonSchema } from './json_schema.ts'
import { errorCodes, isErrorResponse } from './error_codes.ts'
import { TAG_DESCRIPTIONS } from './tags.ts'

const ERROR_REF = { $ref: '#/components/schemas/Error' }

/** The Error schema, with `error.code` narrowed to the codes one operation can answer with this status. */
function errorResponseSchema (codes: readonly string[]): JsonSchema {
  return {
    allOf: [
      ERROR_REF,
      { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } } } }
    ]
  }
}

/** The error body every failure uses; its codes come from the one error table. */
export function errorSchema (): JsonSchema {
  return {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message', 'request_id'],
        additionalProperties: false,
        properties: {
          code: { type: 'string', enum: Object.keys(ERRORS), description: 'Machine-readable code; see docs/errors.md' },
          message: { type: 'string', description: 'Human-readable explanation' },
          field: { type: 'string', description: 'The field that caused the error, when one did' },
          details: { type: 'object', description: 'Extra context, for example the received value and what was expected' },
          errors: {
            type: 'array',
            description: 'Validation errors only: one entry per invalid field',
            items: {
              type: 'object',
              required: ['field', 'message'],
              additionalProperties: false,
              properties: {
                field: { type: 'string' },
                message: { type: 'string' },
                allowed: { type: 'array', description: 'A value outside an enum: the values the field allows' }
              }
            }
          },
          retry_after: { type: 'integer', minimum: 1, description: 'Rate limiting only: seconds until one request is allowed' },
          request_id: { type: 'string', description: 'Same value as the X-Request-Id response header' }
        }
      }
    }
  }
}

function codesText (codes: readonly string[]): string {
  return codes.map((code) => `\`${code}\``).join(', ')
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
  if (def.bodyDoc !== undefined) {
    op.requestBody = {
      required: true,
      content: Object.fromEntries(Object.entries(def.bodyDoc).map(([type, schema]) => [type, { schema: toJsonSchema(schema) }]))
    }
  }
  const responses: Record<string, unknown> = {}
  const codes = errorCodes(def)
  const statuses = new Set([...Object.keys(def.responses).map(Number), ...codes.keys()])
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const declared = def.responses[status]
    const r: Record<string, unknown> = {}
    if (declared !== undefined) {
      r.description = declared.description
    } else {
      r.description = `${STANDARD_DESCRIPTIONS[status]!} (${codesText(codes.get(status)!)})`
    }
    r.headers = responseHeaders(def, status)
    if (status >= 400 && isErrorResponse(declared)) {
      r.content = { 'application/json': { schema: errorResponseSchema(codes.get(status)!) } }
    } else if (status >= 400 && declared?.schema !== undefined) {
      // an answer of its own (readiness with its checks), or the error format when the pipeline refused first
      const own = closeObjects(toJsonSchema(declared.schema))
      const errors = codes.get(status)
      r.content = { 'application/json': { schema: errors === undefined ? own : { anyOf: [own, errorResponseSchema(errors)] } } }
    } else if (declared?.schema !== undefined) {
      const type = declared.contentType ?? 'application/json'
      // JSON answers are built by view functions that write exactly the declared fields: an undeclared one is a lie
      const schema = type === 'application/json' ? closeObjects(toJsonSchema(declared.schema)) : toJsonSchema(declared.schema)
      r.content = { [type]: { schema } }
    }
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
    tags: tags.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? '' })),
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
        'X-Request-Id': {
          description: 'Request identifier; a valid incoming X-Request-Id is echoed', required: true, schema: { type: 'string' }
        },
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
