import type { RouteDef, ResponseDoc } from '../../gateway/http/route.ts'
import { ERRORS, type ErrorCode } from '../../protocol/mod.ts'
import { pathParams } from './json_schema.ts'

const CODES = Object.keys(ERRORS) as ErrorCode[]

/** Whether a declared response is the error format (no schema of its own, or one with the `error` member). */
export function isErrorResponse (doc: ResponseDoc | undefined): boolean {
  if (doc === undefined) return true
  if (doc.schema === undefined) return true
  return (doc.schema as { properties?: Record<string, unknown> }).properties?.error !== undefined
}

/** A query, body or bodyless-POST refusal: `validation_error` is possible on the route. */
function validates (def: RouteDef): boolean {
  if (def.body !== undefined || def.query !== undefined || def.ignoreUnknownQuery !== true) return true
  return def.method !== 'get' && def.method !== 'del' && def.bodyDoc === undefined
}

/**
 * The error codes an operation can answer with, by status. The pipeline's own follow from the route's declaration
 * (gateway/server.ts): a permission means 401/403/429, a path parameter 404, a body 413, any query or body check
 * 400, and every request may meet 500 or 503 while the service shuts down. A status the route declares itself adds
 * the codes its description names (`conflict: …`), or every code of that status when it names none.
 */
export function errorCodes (def: RouteDef): Map<number, ErrorCode[]> {
  const out = new Map<number, Set<ErrorCode>>()
  const add = (code: ErrorCode): void => {
    const status = ERRORS[code].status
    let set = out.get(status)
    if (set === undefined) out.set(status, set = new Set())
    set.add(code)
  }
  add('internal_error')
  add('service_unavailable')
  const changes = def.method !== 'get'
  // a metered request takes a token from Redis, and a change writes to it: either meets a full Redis
  if (changes || (def.permission !== null && def.unmetered !== true)) add('store_full')
  if (validates(def)) add('validation_error')
  if (changes && def.method !== 'del') add('payload_too_large')
  if (pathParams(def.path).length > 0) add('not_found')
  if (def.permission !== null) {
    add('unauthorized')
    add('forbidden')
    // the failed-authentication throttle answers 429 even on an unmetered route
    add('rate_limited')
    if (def.permission !== 'operator') add('organization_suspended')
  }
  for (const [key, doc] of Object.entries(def.responses)) {
    const status = Number(key)
    if (status < 400 || !isErrorResponse(doc)) continue
    const ofStatus = CODES.filter((c) => ERRORS[c].status === status)
    const named = ofStatus.filter((c) => new RegExp(`(^|[^a-z_])${c}([^a-z_]|$)`).test(doc.description))
    for (const c of named.length > 0 ? named : ofStatus) add(c)
  }
  return new Map([...out].sort(([a], [b]) => a - b).map(([s, set]) => [s, CODES.filter((c) => set.has(c))]))
}
