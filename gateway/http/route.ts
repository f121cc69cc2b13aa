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
  /** On a route with `audit`: what the handler adds to the entry the pipeline records after a 2xx. */
  readonly audit: AuditNote
}

/**
 * What a handler adds to its route's audit entry (audit.ts fills the rest). Values must be ids, names, hosts and
 * settings: never a key value, a secret, a private key or a full URL.
 */
export interface AuditNote {
  /** The organisation the change concerns, on an operator route (else the path's organisation, or none). */
  orgId?: string
  /** What was changed, when neither the answer's `id` nor the path's names it. */
  target?: string
  /** Replaces the route's `action` (one route, several kinds of change). */
  action?: string
  /** Further field names and new values. */
  changes: Record<string, unknown>
  /** Items the change touched (a bulk change is one entry). */
  count?: number
  /** The handler found nothing to change (a repeated delete): nothing is recorded. */
  skip?: boolean
  /**
   * The handler made part of its change and then failed (an import stopped by a full store): the entry is recorded
   * with the error answer, whose code the pipeline puts in `changes.error`.
   */
  partial?: boolean
}

/**
 * A route that changes an organisation's or the installation's configuration: after a 2xx the pipeline records one
 * entry in the audit log (gateway/audit.ts), and the answer waits for it.
 */
export interface AuditDecl {
  /** The action name, `<thing>.<change>` (docs/audit-log.md lists them). */
  action: string
  /** Request body fields recorded with their new values: settings only, never a secret. */
  fields?: readonly string[]
  /** Only answers with these statuses are changes (default: every 2xx); `200 already suppressed` is none. */
  statuses?: readonly number[]
  /** The target when the path's `:id`/`:name`/`:email` and the answer's `id` do not name it. */
  target?: (c: AuditView) => string | null | undefined
  /** Further non-secret facts from the request or the answer (a URL's host, a new key's id). */
  detail?: (c: AuditView) => Record<string, unknown>
}

/** What an audit declaration reads: the request's path parameters and body, and the answer's body. */
export interface AuditView {
  params: Readonly<Record<string, string>>
  body: any
  reply: any
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
  /**
   * A body written chunk by chunk as `chunks` yields them (chunked transfer), each after the client has taken the
   * one before: the whole body is never held. A failure after the first chunk closes the connection, so the
   * client sees a cut answer, never a short one that looks complete.
   */
  stream?: { contentType: string, chunks: AsyncIterable<string> }
}

/** `contentType`: the response's media type when it is not JSON (the schema then describes it for OpenAPI). */
export interface ResponseDoc { description: string, schema?: TSchema, contentType?: string }

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
  /**
   * For a route that reads `rawBody` itself (no `body`): the media types it takes and each one's schema, for
   * OpenAPI only.
   */
  bodyDoc?: Record<string, TSchema>
  /** The most bytes the request body may have (413 `payload_too_large` over it); MAX_BODY_BYTES when absent. */
  maxBodyBytes?: number
  /**
   * The query parameters the route takes (an object of optional strings, numbers, booleans, enums). Any other
   * parameter is `400 validation_error` naming it (gateway/http/query.ts); a route without `query` takes none.
   */
  query?: TSchema
  /**
   * Parameters the route does not declare are ignored instead of refused: tracking links, to which mail clients,
   * link scanners and campaign tools append their own (`utm_source`, `fbclid`); refusing them would break the link.
   */
  ignoreUnknownQuery?: true
  responses: Record<number, ResponseDoc>
  /** Skip the per-key rate limit (public endpoints, which are not tied to a key). */
  unmetered?: boolean
  /**
   * While Redis is full: `local` meters the request with this process's own bucket and lets it run, `refuse`
   * answers 503 `store_full`. Default: `local` for GET, `refuse` for methods that change data.
   */
  whenStoreFull?: WhenStoreFull
  /** Recorded in the audit log after a 2xx; every other route that changes data is in the exempt list of audit.ts. */
  audit?: AuditDecl
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
