import type { TSchema } from 'typebox'
import type { IdPrefix, Permission } from '../../protocol/mod.ts'
import type { GatewayDeps } from '../deps.ts'
import type { AuthContext } from '../auth.ts'
import type { WhenStoreFull } from '../rate_limit.ts'

export type Method = 'get' | 'post' | 'patch' | 'put' | 'del'

/** The request as a handler sees it: everything was copied out of uWS before the first await. */
export interface RequestContext<B = unknown> {
  readonly deps: GatewayDeps
  readonly requestId: string
  readonly ip: string
  readonly params: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  readonly headers: Readonly<{ authorization: string, contentType: string, idempotencyKey: string, userAgent: string }>
  readonly body: B
  readonly rawBody: Buffer
  /** Set for every route with a `permission`. */
  readonly auth: AuthContext
  /** Headers the pipeline already decided on (rate limit); a handler may add its own. */
  readonly responseHeaders: Record<string, string>
}

export interface Reply {
  status: number
  body?: unknown
  headers?: Record<string, string>
  /** Bytes written as they are, with this content type (tracking pixel, Prometheus text). */
  raw?: { contentType: string, data: string | Buffer }
}

export interface ResponseDoc { description: string, schema?: TSchema }

/**
 * One endpoint. The table of these drives uWS registration, validation, the permission check and the
 * OpenAPI document, so none of them is written twice.
 */
export interface RouteDef<B = any> {
  method: Method
  path: string
  /** null: no API key (health, tracking). */
  permission: Permission | null
  /**
   * The kind of id the `:id` path parameter holds. One of another shape (`msg_…:evs`, `../`) is `404 not_found`
   * before the handler runs, so a path never reaches a store's key names unchecked.
   */
  idPrefix?: IdPrefix
  summary: string
  tag: string
  description?: string
  body?: TSchema
  query?: TSchema
  responses: Record<number, ResponseDoc>
  /** Skip the per-key rate limit (public endpoints, which are not tied to a key). */
  unmetered?: boolean
  /**
   * While Redis is full: `local` meters the request with this process's own bucket and lets it run, `refuse`
   * answers 503 `store_full`. Default: `local` for GET, `refuse` for methods that change data.
   */
  whenStoreFull?: WhenStoreFull
  handler: (ctx: RequestContext<B>) => Promise<Reply> | Reply
}

export function route<B = any> (def: RouteDef<B>): RouteDef<B> {
  return def
}
