import type { RouteDef } from '../../gateway/http/route.ts'
import { toJsonSchema, openApiPath, httpMethod, type JsonSchema } from './json_schema.ts'
import { errorCodes } from './error_codes.ts'
import { MAX_JSON_DEPTH } from '../../gateway/http/json_depth.ts'

/** A schema's type in a few words: `string`, `"a" | "b"`, `array of object`. */
export function typeLabel (s: JsonSchema): string {
  if (s.const !== undefined) return `\`${JSON.stringify(s.const)}\``
  if (Array.isArray(s.enum)) return s.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' \\| ')
  const alts = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined
  if (Array.isArray(alts)) return alts.map(typeLabel).join(' \\| ')
  if (s.type === 'array') return `array of ${typeLabel((s.items ?? {}) as JsonSchema)}`
  if (Array.isArray(s.type)) return s.type.join(' \\| ')
  return typeof s.type === 'string' ? s.type : 'any'
}

const CONSTRAINTS: Array<[string, string]> = [
  ['minLength', 'min length'], ['maxLength', 'max length'], ['minimum', '≥'], ['maximum', '≤'],
  ['exclusiveMinimum', '>'], ['exclusiveMaximum', '<'], ['minItems', 'min items'], ['maxItems', 'max items'],
  ['maxProperties', 'max properties'], ['format', 'format'], ['pattern', 'pattern'], ['default', 'default']
]

function constraints (s: JsonSchema): string {
  const parts: string[] = []
  for (const [key, label] of CONSTRAINTS) {
    if (s[key] === undefined) continue
    const v = key === 'pattern' || key === 'default' ? `\`${key === 'default' ? JSON.stringify(s[key]) : String(s[key])}\`` : String(s[key])
    parts.push(label.length <= 2 ? `${label} ${v}` : `${label}: ${v}`)
  }
  return parts.join(', ')
}

function cell (text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ')
}

/** Field rows of an object schema, one level of nesting deep (`a.b`, `a[].b`). */
export function fieldRows (schema: JsonSchema, prefix = '', depth = 0): string[] {
  const props = schema.properties as Record<string, JsonSchema> | undefined
  if (props === undefined) return []
  const required = new Set((schema.required ?? []) as string[])
  const rows: string[] = []
  for (const [name, s] of Object.entries(props)) {
    const field = prefix + name
    const desc = typeof s.description === 'string' ? s.description : ''
    rows.push(`| \`${field}\` | ${typeLabel(s)} | ${required.has(name) ? 'yes' : 'no'} | ${cell(constraints(s))} | ${cell(desc)} |`)
    if (depth < 1 && s.type === 'object') rows.push(...fieldRows(s, `${field}.`, depth + 1))
    const items = s.items as JsonSchema | undefined
    if (depth < 1 && s.type === 'array' && items?.type === 'object') rows.push(...fieldRows(items, `${field}[].`, depth + 1))
  }
  return rows
}

function fieldTable (schema: JsonSchema): string[] {
  const rows = fieldRows(schema)
  if (rows.length === 0) return [`Type: ${typeLabel(schema)}`, '']
  return ['| field | type | required | constraints | description |', '|---|---|---|---|---|', ...rows, '']
}

function endpoint (def: RouteDef): string[] {
  const method = httpMethod(def.method).toUpperCase()
  const out = [`### ${method} ${openApiPath(def.path)}`, '', def.summary + '.', '']
  if (def.description !== undefined) out.push(def.description, '')
  const permission = def.permission === null
    ? 'none (no API key)'
    : def.permission === 'operator'
      ? 'an operator key (`ob_op_…`); organisation keys get 403 `forbidden`'
      : `\`${def.permission}\` (or \`admin\`); a key of a suspended organisation gets 403 \`organization_suspended\``
  out.push(`Permission: ${permission}`, '')
  if (def.query !== undefined) out.push('Query parameters:', '', ...fieldTable(toJsonSchema(def.query)))
  if (def.ignoreUnknownQuery === true) out.push('Query parameters it does not name are ignored.', '')
  if (def.body !== undefined) out.push('Request body (`application/json`):', '', ...fieldTable(toJsonSchema(def.body)))
  if (def.body === undefined && def.bodyDoc === undefined && def.method !== 'get' && def.method !== 'del') {
    out.push('Request body: none (a body is 400 `validation_error`).', '')
  }
  out.push('Responses:', '')
  for (const [status, r] of Object.entries(def.responses)) {
    out.push(`- **${status}**: ${r.description}`)
  }
  const codes = errorCodes(def)
  const standard = [...codes.keys()].filter((s) => def.responses[s] === undefined)
  if (standard.length > 0) out.push(`- Errors: ${standard.join(', ')} in the [error format](errors.md)`)
  out.push(`- Error codes: ${[...codes.values()].flat().map((c) => `\`${c}\``).join(', ')}`)
  out.push('')
  for (const [status, r] of Object.entries(def.responses)) {
    if (r.schema === undefined || Number(status) >= 400) continue
    const schema = toJsonSchema(r.schema)
    if (fieldRows(schema).length === 0) continue
    out.push(`Response ${status} body:`, '', ...fieldTable(schema))
  }
  return out
}

/** docs/api.md: every endpoint of the route table, grouped by tag in table order. */
export function renderApiMarkdown (routes: readonly RouteDef[]): string {
  const tags: string[] = []
  for (const def of routes) if (!tags.includes(def.tag)) tags.push(def.tag)
  const out = [
    '# Outbox API reference',
    '',
    '<!-- Generated from the route table (gateway/routes/mod.ts) by `npm run openapi`; do not edit by hand. -->',
    '',
    'Base URL: `OB_PUBLIC_URL` (default `http://127.0.0.1:<OB_HTTP_PORT>`, port 8080 by default). Authenticated endpoints take `Authorization: Bearer <API key>`;',
    'bodies are JSON (`Content-Type: application/json`, at most 10 MB, arrays and objects nested at most ' +
      `${MAX_JSON_DEPTH} levels deep). Every response carries \`X-Request-Id\`; authenticated`,
    'ones carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, and a 429 also `Retry-After`. Errors use one',
    'format, described in [errors.md](errors.md). The same table produces the OpenAPI 3.1 document [openapi.json](openapi.json).',
    '',
    'The API is strict about what it takes:',
    '',
    '- A query parameter an endpoint does not list is 400 `validation_error`, with the parameter in `error.field` and',
    '  `error.details.parameter` and the ones it takes in `error.details.allowed` (a typo such as `?limt=5` is not ignored).',
    '  The tracking links (`/t/o`, `/t/c`, `/t/u`) are the exception: they ignore what mail clients and campaign tools append.',
    '- A body field an endpoint does not list is 400 `validation_error` naming it; a POST that takes no body refuses one.',
    '- A value outside an enum is 400 `validation_error` whose message names the allowed values; the entry of `error.errors`',
    '  for that field lists them in `allowed`.',
    '- A method a path does not support is 405 `method_not_allowed` with an `Allow` header listing exactly the methods it',
    '  supports (`OPTIONS` is not one: it is answered so too).',
    '- Each operation of the OpenAPI document lists the error codes it can answer, per status; its success bodies list',
    '  every field they carry (`additionalProperties: false`).',
    '',
    '| method | path | permission | summary |',
    '|---|---|---|---|',
    ...routes.map((d) =>
      `| ${httpMethod(d.method).toUpperCase()} | \`${openApiPath(d.path)}\` | ${d.permission ?? '—'} | ${cell(d.summary)} |`),
    ''
  ]
  for (const tag of tags) {
    out.push(`## ${tag}`, '')
    for (const def of routes.filter((d) => d.tag === tag)) out.push(...endpoint(def))
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n')
}
