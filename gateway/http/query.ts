import type { TSchema } from 'typebox'
import { Value } from 'typebox/value'
import { ApiError } from '../../protocol/mod.ts'
import type { RouteDef } from './route.ts'
import { compileValidator, assertValid, type Validator } from './validate.ts'

/** Checks a request's query string against its route's declaration; throws `validation_error` or returns. */
export interface QueryCheck { (query: URLSearchParams): void }

/** A route without a query: nothing to check but that no parameter came. */
const NONE: readonly string[] = Object.freeze([])

/**
 * The query check of one route, compiled once. A parameter the route does not declare is refused by name (a typo
 * such as `?limt=5` would otherwise be ignored silently and the caller would read a page of the default size),
 * unless the route says `ignoreUnknownQuery`; the declared ones are converted (`limit=5` → 5) and validated.
 */
export function compileQuery (def: Pick<RouteDef, 'query' | 'ignoreUnknownQuery'>): QueryCheck {
  const schema: TSchema | undefined = def.query
  const names = schema === undefined ? NONE : Object.keys((schema as { properties?: object }).properties ?? {})
  const known = new Set(names)
  const strict = def.ignoreUnknownQuery !== true
  const validator: Validator | undefined = schema === undefined ? undefined : compileValidator(schema)
  return (query) => {
    if (query.size === 0 && validator === undefined) return
    const q: Record<string, unknown> = {}
    for (const [k, v] of query) {
      if (known.has(k)) q[k] = v
      else if (strict) throw unknownParameter(k, names)
    }
    if (validator !== undefined) assertValid(validator, Value.Convert(schema!, q))
  }
}

function unknownParameter (name: string, allowed: readonly string[]): ApiError {
  const takes = allowed.length === 0 ? 'takes no query parameters' : `takes ${allowed.join(', ')}`
  // the name is the client's own text: cut, so an error never echoes a long value back whole
  const shown = name.length > 64 ? `${name.slice(0, 64)}…` : name
  return new ApiError('validation_error', `Unknown query parameter "${shown}": this endpoint ${takes}.`, {
    field: shown,
    errors: [{ field: shown, message: 'is not a known query parameter' }],
    details: { parameter: shown, allowed: [...allowed] }
  })
}
