import type { TSchema } from 'typebox'
import type { IdPrefix, Permission } from '../../protocol/mod.ts'
import type { GatewayDeps } from '../deps.ts'
import type { AuthContext, OperatorContext } from '../auth.ts'
import type { WhenStoreFull } from '../rate_limit.ts'

export type Method = 'get' | 'post' | 'patch' | 'put' | 'del'

/** The request as a handler sees it: everything was copied out of uWS before the first await. */
interface RequestBase<B> {
  readonly deps: GatewayDeps
  readonly requestId: string
  readonly ip: string
  readonly params: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  readonly headers: Readonly<{ authorization: string, contentType: string, idempotencyKey: string, userAgent: string, host: string }>
  readonly body: B
  readonly rawBody: Buffer
  /** Headers the pipeline already decided on (rate limit); a handler may add its own. */
  readonly responseHeaders: Record<string, string>
}

/** The request of an organisation route (or of a public one, `permission: null`). */
export interface RequestContext<B = unknown> extends RequestBase<B> {
  /** Set for every route with a `permission`. */
  readonly auth: AuthContext
}

/** The request of an operator route: an operator key, and no organisation. */
export interface OperatorRequestContext<B = unknown> extends RequestBase<B> {
  readonly operator: OperatorContext
}

export interface Reply {
  status: number
  body?: unknown
  headers?: Record<string, string>
  /** Bytes written as they are, with this content type (tracking pixel, Prometheus text). */
  raw?: { contentType: string, data: string | Buffer }
}

export interface ResponseDoc { description: string, schema?: TSchema }

interface RouteBase {
  method: Method
  path: string
  /**
   * The kind of id the `:id` path parameter holds. One of another shape (`msg_…:evs`, `../`) is `404 not_found`
   * before the handler runs, so a path never reaches a store's key names unchecked.
   */
  idPrefix?: IdPrefix
  /** Other path parameters and the pattern each must match (anchored); anything else is `404 not_found`, as for `idPrefix`. */
  paramPatterns?: Readonly<Record<string, string>>
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
}

/** An endpoint of an organisation's API: its key must hold `permission` (or admin). */
export interface OrgRouteDef<B = any> extends RouteBase {
  /** null: no API key (health, tracking). */
  permission: Permission | null
  handler: (ctx: RequestContext<B>) => Promise<Reply> | Reply
}

/**
 * An endpoint of the operator API (`/v1/operator/…`): only an operator key reaches it; an organisation key, admin
 * included, is `403 forbidden`.
 */
export interface OperatorRouteDef<B = any> extends RouteBase {
  permission: 'operator'
  handler: (ctx: OperatorRequestContext<B>) => Promise<Reply> | Reply
}

/**
 * One endpoint. The table of these drives uWS registration, validation, the permission check and the
 * OpenAPI document, so none of them is written twice.
 */
export type RouteDef<B = any> = OrgRouteDef<B> | OperatorRouteDef<B>

export function route<B = any> (def: OrgRouteDef<B>): OrgRouteDef<B> {
  return def
}

export function operatorRoute<B = any> (def: OperatorRouteDef<B>): OperatorRouteDef<B> {
  return def
}
