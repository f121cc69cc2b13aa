import type { TSchema } from 'typebox'

export type JsonSchema = { [key: string]: unknown }

/**
 * A TypeBox schema as plain JSON Schema: TypeBox keeps its own markers under `~`-prefixed and symbol keys,
 * which mean nothing to OpenAPI tools, so only enumerable string keys without `~` are copied.
 */
export function toJsonSchema (schema: TSchema | unknown): JsonSchema {
  return clean(schema, false) as JsonSchema
}

/** Keywords whose value is a map of names to schemas: its keys are names, never keywords. */
const NAME_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas'])

/**
 * `names`: `value` is such a map. A keyword of our own (`errorMessage`, the text validation answers with) is no
 * JSON Schema keyword, so OpenAPI tools refuse it: it goes out as the extension `x-error-message`.
 */
function clean (value: unknown, names: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => clean(v, false))
  if (value === null || typeof value !== 'object') return value
  const out: JsonSchema = {}
  for (const key of Object.keys(value)) {
    if (key.startsWith('~')) continue
    const v = (value as Record<string, unknown>)[key]
    if (v === undefined || typeof v === 'function') continue
    out[!names && key === 'errorMessage' ? 'x-error-message' : key] = clean(v, !names && NAME_MAPS.has(key))
  }
  return out
}

/**
 * A copy of a JSON schema in which every object with named properties and no word on others says
 * `additionalProperties: false`. A map (`patternProperties`, `additionalProperties` given) stays as it is.
 */
export function closeObjects (schema: JsonSchema): JsonSchema {
  return close(schema, false) as JsonSchema
}

function close (value: unknown, names: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => close(v, false))
  if (value === null || typeof value !== 'object') return value
  const out: JsonSchema = {}
  for (const [key, v] of Object.entries(value)) out[key] = close(v, !names && NAME_MAPS.has(key))
  if (!names && out.properties !== undefined && out.additionalProperties === undefined && out.patternProperties === undefined) {
    out.additionalProperties = false
  }
  return out
}

/** `:id` segments of a uWS pattern become OpenAPI `{id}` templates. */
export function openApiPath (path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, '{$1}')
}

export function pathParams (path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!)
}

export function httpMethod (method: string): string {
  return method === 'del' ? 'delete' : method
}

/** A stable operation id from method and path: GET /v1/domains/:id → getDomainsById. */
export function operationId (method: string, path: string): string {
  const words = path.split('/').filter((s) => s !== '' && s !== 'v1').map((s) => {
    const param = s.startsWith(':')
    const name = (param ? s.slice(1) : s).split(/[-_.]/).map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('')
    return param ? `By${name}` : name
  })
  return httpMethod(method) + words.join('')
}
