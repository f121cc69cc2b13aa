import { isId } from '../../protocol/mod.ts'
import type { RouteDef } from './route.ts'

/** HTTP method names in the order an `Allow` header lists them. */
const ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']

export function methodName (method: RouteDef['method']): string {
  return method === 'del' ? 'DELETE' : method.toUpperCase()
}

/**
 * The methods each path of a route table supports, for the `Allow` header of a 405 answer. A path parameter counts
 * only when its value has the shape the route takes (`idPrefix`, `paramPatterns`): `/v1/messages/send` is a path
 * of `POST` only, even though `GET /v1/messages/:id` has the same number of segments.
 */
export function allowedMethods (routes: readonly RouteDef[]): (path: string) => string[] {
  const matchers = routes.map((def) => {
    const names = [...def.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!)
    const re = new RegExp('^' + def.path.replace(/:[A-Za-z_]+/g, '([^/]+)') + '$')
    const patterns = Object.entries(def.paramPatterns ?? {}).map(([n, p]) => [n, new RegExp(p)] as const)
    return { def, names, re, patterns, method: methodName(def.method) }
  })
  return (path) => {
    const out = new Set<string>()
    for (const m of matchers) {
      const hit = m.re.exec(path)
      if (hit === null) continue
      const params: Record<string, string> = {}
      m.names.forEach((n, i) => {
        const raw = hit[i + 1]!
        try { params[n] = decodeURIComponent(raw) } catch { params[n] = raw }
      })
      if (m.def.idPrefix !== undefined && !isId(m.def.idPrefix, params.id ?? '')) continue
      if (m.patterns.some(([n, re]) => !re.test(params[n] ?? ''))) continue
      out.add(m.method)
    }
    return ORDER.filter((x) => out.has(x))
  }
}
