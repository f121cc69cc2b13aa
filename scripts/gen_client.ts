import { readFileSync, writeFileSync } from 'node:fs'

/**
 * Generates client/src/generated.ts from docs/openapi.json: one TypeScript type per request body, query and
 * success response, and one typed method per HTTP operation, grouped by resource (`apiKeys.create`,
 * `messages.get`, …). Run `npm run gen:client` after `npm run openapi`; a unit test fails when the committed
 * file is stale.
 */

interface Schema { [k: string]: any }
interface Operation {
  operationId: string
  summary?: string
  parameters?: Array<{ name: string, in: string, required?: boolean, schema: Schema, description?: string }>
  requestBody?: { required?: boolean, content?: Record<string, { schema: Schema }> }
  responses: Record<string, { description?: string, content?: Record<string, { schema: Schema }> }>
}
interface OpenApi { paths: Record<string, Record<string, Operation>>, components?: { schemas?: Record<string, Schema> } }

const ROOT = new URL('../../', import.meta.url)
/** Paths whose first two segments name one resource. */
const TWO_SEGMENT_RESOURCES = ['inbound/routes']
/**
 * Endpoints that honour Idempotency-Key: the client sends one (the same on every retry), so a retried call changes nothing
 * twice.
 */
const IDEMPOTENT_PATHS = new Set([
  '/v1/messages/send', '/v1/messages/batch', '/v1/webhooks/{id}/rotate-secret', '/v1/webhooks/{id}/replay', '/v1/webhooks/{id}/recover'
])

const camel = (s: string): string => s.replace(/[-_/.]+([a-z0-9])/g, (_, c: string) => c.toUpperCase())
const pascal = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1)
const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/

function propName (name: string): string {
  return IDENT.test(name) ? name : JSON.stringify(name)
}

function tsType (s: Schema | undefined, doc: OpenApi, indent: string): string {
  if (s === undefined || (s as unknown) === true) return 'unknown'
  if (s.$ref !== undefined) {
    const name = String(s.$ref).split('/').pop()!
    return tsType(doc.components?.schemas?.[name], doc, indent)
  }
  if (s.const !== undefined) return JSON.stringify(s.const)
  if (Array.isArray(s.enum)) return s.enum.map((v: unknown) => JSON.stringify(v)).join(' | ')
  const alts = s.anyOf ?? s.oneOf
  if (Array.isArray(alts)) return [...new Set(alts.map((a: Schema) => tsType(a, doc, indent)))].join(' | ')
  if (Array.isArray(s.type)) return s.type.map((t: string) => tsType({ ...s, type: t }, doc, indent)).join(' | ')
  switch (s.type) {
    case 'string': return 'string'
    case 'integer': case 'number': return 'number'
    case 'boolean': return 'boolean'
    case 'null': return 'null'
    case 'array': {
      const item = tsType(s.items, doc, indent)
      return /[ |]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`
    }
    case 'object': return objectType(s, doc, indent)
    default: return 'unknown'
  }
}

function objectType (s: Schema, doc: OpenApi, indent: string): string {
  const props = Object.entries((s.properties ?? {}) as Record<string, Schema>)
  const required = new Set<string>(s.required ?? [])
  const inner = indent + '  '
  const lines = props.map(([name, p]) => {
    const comment = typeof p.description === 'string' ? `${inner}/** ${p.description.replace(/\*\//g, '*∕')} */\n` : ''
    return `${comment}${inner}${propName(name)}${required.has(name) ? '' : '?'}: ${tsType(p, doc, inner)}`
  })
  const extra = s.patternProperties !== undefined
    ? Object.values(s.patternProperties as Record<string, Schema>)[0]
    : (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined)
  if (extra !== undefined) lines.push(`${inner}[key: string]: ${tsType(extra, doc, inner)}`)
  if (lines.length === 0) return s.additionalProperties === false ? 'Record<string, never>' : 'Record<string, unknown>'
  return `{\n${lines.join('\n')}\n${indent}}`
}

interface Method {
  group: string
  action: string
  op: Operation
  method: string
  path: string
  pathParams: string[]
  queryParams: Operation['parameters']
  body?: Schema
  bodyRequired: boolean
  response?: Schema
  responseText: boolean
}

function success (op: Operation): { schema?: Schema, text: boolean } {
  const code = Object.keys(op.responses).filter((c) => /^2\d\d$/.test(c)).sort()[0]
  if (code === undefined || code === '204') return { text: false }
  const content = op.responses[code]!.content
  // no JSON answer (none, or CSV): the call resolves with the text
  if (content?.['application/json'] === undefined) return { text: true }
  return { schema: content['application/json']?.schema, text: false }
}

function naming (path: string, method: string, op: Operation): { group: string, action: string } {
  const rest = path.replace(/^\/v1\//, '').replace(/^\//, '')
  const prefix = TWO_SEGMENT_RESOURCES.find((p) => rest === p || rest.startsWith(p + '/')) ?? rest.split('/')[0]!
  const tail = rest.slice(prefix.length).split('/').filter((s) => s !== '')
  const hasId = tail.length > 0 && tail[0]!.startsWith('{')
  const verbs = tail.filter((s) => !s.startsWith('{'))
  let action: string
  if (verbs.length > 0) action = camel(verbs.join('-'))
  else if (method === 'post') action = 'create'
  else if (method === 'patch') action = 'update'
  else if (method === 'put') action = 'replace'
  else if (method === 'delete') action = 'delete'
  else if (hasId) action = 'get'
  else {
    const schema = success(op).schema
    action = schema?.properties?.has_more !== undefined ? 'list' : 'get'
  }
  return { group: camel(prefix), action }
}

function collect (doc: OpenApi): Method[] {
  const out: Method[] = []
  for (const [path, ops] of Object.entries(doc.paths)) {
    // Tracking links are followed by recipients' mail clients, never called by a sender's code.
    if (path.startsWith('/t/')) continue
    // The operator API takes operator keys, which no sender holds: operators use the CLI (or plain HTTP).
    if (path.startsWith('/v1/operator/')) continue
    for (const [method, op] of Object.entries(ops)) {
      if (op.responses['101'] !== undefined) continue // WebSocket: not an HTTP call
      const { group, action } = naming(path, method, op)
      const body = op.requestBody?.content?.['application/json']?.schema
      const ok = success(op)
      out.push({
        group,
        action,
        op,
        method: method.toUpperCase(),
        path,
        pathParams: (op.parameters ?? []).filter((p) => p.in === 'path').map((p) => p.name),
        queryParams: (op.parameters ?? []).filter((p) => p.in === 'query'),
        body,
        bodyRequired: op.requestBody?.required === true,
        response: ok.schema,
        responseText: ok.text
      })
    }
  }
  return out
}

/** The generated module's source text. */
export function generateClient (doc: OpenApi): string {
  const methods = collect(doc)
  const types: string[] = []
  const groups = new Map<string, string[]>()
  for (const m of methods) {
    const base = pascal(m.op.operationId)
    const sig: string[] = m.pathParams.map((p) => `${camel(p)}: string`)
    const args: string[] = []
    if (m.body !== undefined) {
      types.push(`/** Request body of ${m.method} ${m.path}. */\nexport type ${base}Body = ${tsType(m.body, doc, '')}\n`)
      sig.push(`body: ${base}Body`)
    }
    if (m.queryParams !== undefined && m.queryParams.length > 0) {
      const q = {
        type: 'object',
        properties: Object.fromEntries(m.queryParams.map((p) => [
          p.name, { ...p.schema, description: p.description ?? p.schema.description }
        ])),
        required: m.queryParams.filter((p) => p.required).map((p) => p.name)
      }
      types.push(`/** Query parameters of ${m.method} ${m.path}. */\nexport type ${base}Query = ${tsType(q, doc, '')}\n`)
      sig.push(`query${q.required.length > 0 ? '' : '?'}: ${base}Query`)
    }
    const result = m.responseText ? 'string' : (m.response === undefined ? 'void' : `${base}Response`)
    if (m.response !== undefined) {
      types.push(`/** Response of ${m.method} ${m.path}. */\nexport type ${base}Response = ${tsType(m.response, doc, '')}\n`)
    }
    sig.push('options?: RequestOptions')
    const pathExpr = m.pathParams.length === 0
      ? `'${m.path}'`
      : '`' + m.path.replace(/\{([^}]+)\}/g, (_, p: string) => '${encodeURIComponent(' + camel(p) + ')}') + '`'
    const spec = [`method: '${m.method}'`, `path: ${pathExpr}`]
    if (m.body !== undefined) spec.push('body')
    if (m.queryParams !== undefined && m.queryParams.length > 0) spec.push('query')
    if (IDEMPOTENT_PATHS.has(m.path)) spec.push('idempotent: true')
    if (m.responseText) spec.push('text: true')
    args.push(`{ ${spec.join(', ')} }`)
    const summary = (m.op.summary ?? '').replace(/\*\//g, '*∕')
    const line = `    /** ${m.method} ${m.path}: ${summary}. */\n` +
      `    ${propName(m.action)}: async (${sig.join(', ')}): Promise<${result}> => await call<${result}>(${args[0]}, options)`
    const list = groups.get(m.group) ?? []
    list.push(line)
    groups.set(m.group, list)
  }
  const groupSrc = [...groups.entries()].map(([g, lines]) => `  ${propName(g)}: {\n${lines.join(',\n')}\n  }`).join(',\n')
  return `// Generated from docs/openapi.json by scripts/gen_client.ts (npm run gen:client). Do not edit by hand.
/* eslint-disable */

/** Per-call options. */
export interface RequestOptions {
  /** Idempotency-Key for sends; generated (crypto.randomUUID) when absent and reused across retries. */
  idempotencyKey?: string
  /** Aborts the call, including any wait between retries. */
  signal?: AbortSignal
  /** Extra request headers. */
  headers?: Record<string, string>
}

/** What a generated method asks the transport to do. */
export interface CallSpec {
  method: string
  path: string
  body?: unknown
  query?: Record<string, unknown>
  idempotent?: true
  text?: true
}

export type Call = <T>(spec: CallSpec, options?: RequestOptions) => Promise<T>

${types.join('\n')}
/** Every HTTP operation of docs/openapi.json, grouped by resource. */
export function operations (call: Call) {
  return {
${groupSrc}
  }
}

export type Operations = ReturnType<typeof operations>
`
}

// `npm run gen:client`: regenerate client/src/generated.ts from docs/openapi.json.
if (process.argv[1] !== undefined && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const doc = JSON.parse(readFileSync(new URL('docs/openapi.json', ROOT), 'utf8')) as OpenApi
  writeFileSync(new URL('client/src/generated.ts', ROOT), generateClient(doc))
  process.stdout.write('client/src/generated.ts written\n')
}
