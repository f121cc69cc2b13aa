import { readFileSync } from 'node:fs'
import { Value } from 'typebox/value'

/**
 * Checks a real answer against the committed docs/openapi.json: its status is one the operation declares, every
 * header the response declares `required` is present, and a JSON body passes the declared schema, whose objects are
 * closed (a field the document does not list fails). Returns the problems, none when the answer conforms.
 */
export type Doc = { paths: Record<string, Record<string, any>>, components: Record<string, Record<string, any>> }

export const OPENAPI: Doc = JSON.parse(readFileSync(new URL('../../../docs/openapi.json', import.meta.url), 'utf8'))

/** A copy of `schema` with every `#/components/…` reference replaced by what it names (the document has no cycles). */
export function resolveRefs (doc: Doc, schema: unknown): any {
  if (Array.isArray(schema)) return schema.map((s) => resolveRefs(doc, s))
  if (schema === null || typeof schema !== 'object') return schema
  const ref = (schema as { $ref?: unknown }).$ref
  if (typeof ref === 'string') {
    const [, , kind, name] = ref.split('/')
    return resolveRefs(doc, doc.components[kind!]![name!])
  }
  return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, resolveRefs(doc, v)]))
}

export interface Answer { status: number, headers: { get: (name: string) => string | null }, body: unknown }

/** `method`: lower case as in the document; `path`: the document's template (`/v1/domains/{id}`). */
export function conformance (doc: Doc, method: string, path: string, answer: Answer): string[] {
  const op = doc.paths[path]?.[method]
  if (op === undefined) return [`${method} ${path} is not in the document`]
  const response = op.responses[String(answer.status)]
  if (response === undefined) return [`${method} ${path}: status ${answer.status} is not declared`]
  const problems: string[] = []
  for (const [name, h] of Object.entries(response.headers ?? {})) {
    const header = resolveRefs(doc, h)
    if (header.required !== true || answer.headers.get(name) !== null) continue
    problems.push(`${method} ${path} ${answer.status}: no ${name} header`)
  }
  const type = answer.headers.get('content-type') ?? ''
  const schema = response.content?.['application/json']?.schema
  if (type.startsWith('application/json') && schema !== undefined && !Value.Check(resolveRefs(doc, schema), answer.body)) {
    problems.push(`${method} ${path} ${answer.status}: the body does not match the document: ${JSON.stringify(answer.body).slice(0, 400)}`)
  }
  return problems
}
