import uWS from 'uWebSockets.js'
import type { Logger } from 'pino'
import { ApiError, isId, newId, REDIS_KEYS } from '../protocol/mod.ts'
import { planLimit } from '../stores/control_plane/mod.ts'
import type { GatewayDeps } from './deps.ts'
import type { AuditNote, OperatorRequestContext, Reply, RequestContext, RouteDef } from './http/route.ts'
import { RequestBody, parseJson } from './http/body.ts'
import { compileValidator, assertValid, type Validator } from './http/validate.ts'
import { compileQuery, type QueryCheck } from './http/query.ts'
import { allowedMethods, methodName } from './http/allow.ts'
import { statusLine } from './http/status_text.ts'
import { unsafeHeader } from './http/header_guard.ts'
import { authenticate, authenticateOperator, hasPermission, type AuthContext, type OperatorContext } from './auth.ts'
import type { WhenStoreFull } from './rate_limit.ts'
import { emptyNote, recordChange, type AuditSink } from './audit.ts'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const JSON_TYPE = 'application/json'
const EMPTY: Buffer = Buffer.alloc(0)
const NO_AUTH = undefined as unknown as AuthContext
const NO_OPERATOR = undefined as unknown as OperatorContext
const NO_NOTE: AuditNote = Object.freeze({ changes: Object.freeze({}) }) as AuditNote
/**
 * Requests a minute per operator key: the operator API changes configuration, a person or a deploy script calls
 * it, and 600 leaves room for a script that walks every organisation.
 */
export const OPERATOR_REQUESTS_PER_MINUTE = 600
/** Shared by every request without a query string; handlers only read queries. */
const EMPTY_QUERY = new URLSearchParams()
/** One instance serves every refusal: it carries no state of a request. */
const NO_BODY_TAKEN = new ApiError('validation_error', 'This endpoint takes no request body; send none.', {
  field: 'body', errors: [{ field: 'body', message: 'is not taken by this endpoint' }]
})

/**
 * The pipeline fills body, rawBody and auth (or operator, on an operator route) in place: one object per request, no
 * spread copies. A handler's type shows it only the one its route sets.
 */
type BothContexts = RequestContext & OperatorRequestContext
type MutableContext = { -readonly [K in keyof BothContexts]: BothContexts[K] }

export interface HttpServer {
  readonly app: uWS.TemplatedApp
  /** While true, new requests get 503 so a load balancer moves on; in-flight ones finish. */
  draining: boolean
  inFlight: number
}

interface Compiled {
  def: RouteDef
  params: string[]
  body?: Validator
  query: QueryCheck
  /** A POST, PUT or PATCH that declares no body (`body`, `bodyDoc`): a body sent anyway is refused, not ignored. */
  refusesBody: boolean
  paramPatterns: Array<[string, RegExp]>
  label: string
  whenStoreFull: WhenStoreFull
}

/** The per-key limit of an organisation's plan (stores/control_plane/organizations.ts, which the CLI shares). */
export { planLimit }

/**
 * Every HTTP answer of the route table goes out here; a header holding CR, LF or NUL turns it into a 500. Writes
 * the whole answer, or with `uploadGoesOn` all of it but its end (chunked), so a client still uploading reads it
 * while the rest of its body is drained; `replyDuringUpload` ends it then.
 */
function writeReply (
  res: uWS.HttpResponse, given: Reply, requestId: string, givenExtra: Record<string, string>, close: boolean, uploadGoesOn: boolean,
  log?: Logger
): void {
  let reply = given
  let extra = givenExtra
  const unsafe = unsafeHeader(extra, reply.headers)
  if (unsafe !== undefined) {
    log?.error({ requestId, header: unsafe, status: reply.status }, 'response refused: a header holds CR, LF or NUL')
    reply = errorReply(new ApiError('internal_error'), requestId)
    extra = {}
  }
  res.cork(() => {
    res.writeStatus(statusLine(reply.status))
    res.writeHeader('X-Request-Id', requestId)
    for (const k in extra) res.writeHeader(k, extra[k]!)
    if (reply.headers !== undefined) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]!)
    if (reply.raw !== undefined) {
      res.writeHeader('Content-Type', reply.raw.contentType)
      if (uploadGoesOn) res.write(reply.raw.data)
      else res.end(reply.raw.data, close)
    } else if (reply.body === undefined) {
      if (uploadGoesOn) res.write('')
      else res.endWithoutBody(0, close)
    } else {
      res.writeHeader('Content-Type', JSON_TYPE)
      if (uploadGoesOn) res.write(JSON.stringify(reply.body))
      else res.end(JSON.stringify(reply.body), close)
    }
  })
}

/** `v`: the client went away; `wake`: called then, so a stream waiting for the client to read stops waiting. */
interface Aborted { v: boolean, wake?: () => void }

/**
 * Writes a streamed answer: the status and headers, then each chunk once the client has taken the last one
 * (uWS buffers a chunk the socket did not take whole and calls `onWritable` when it has drained). Stops when the
 * client goes away; a failure of the source after the headers closes the connection.
 */
async function writeStream (
  res: uWS.HttpResponse, aborted: Aborted, reply: Reply, requestId: string, extra: Record<string, string>, log: Logger
): Promise<void> {
  const unsafe = unsafeHeader(extra, reply.headers)
  if (unsafe !== undefined) {
    log.error({ requestId, header: unsafe, status: reply.status }, 'response refused: a header holds CR, LF or NUL')
    writeReply(res, errorReply(new ApiError('internal_error'), requestId), requestId, {}, false, false, log)
    return
  }
  const stream = reply.stream!
  res.cork(() => {
    res.writeStatus(statusLine(reply.status))
    res.writeHeader('X-Request-Id', requestId)
    for (const k in extra) res.writeHeader(k, extra[k]!)
    if (reply.headers !== undefined) for (const k in reply.headers) res.writeHeader(k, reply.headers[k]!)
    res.writeHeader('Content-Type', stream.contentType)
  })
  const chunks = stream.chunks[Symbol.asyncIterator]()
  try {
    for (;;) {
      const next = await chunks.next()
      if (aborted.v) break
      if (next.done === true) {
        res.cork(() => { res.end() })
        return
      }
      let taken = true
      res.cork(() => { taken = res.write(next.value) })
      if (!taken) {
        await new Promise<void>((resolve) => {
          // Woken through setImmediate, not in uWS's callback: uWS calls onWritable from its own poll callback
          // without draining the microtask queue, so a promise resolved there went on only at the process's next
          // unrelated event (on an idle gateway, never: a client that paused reading then got nothing more).
          // setImmediate runs on Node's loop, which drains the queue after it. The wake on abort goes the same way.
          const wake = (): void => { setImmediate(resolve) }
          aborted.wake = wake
          res.onWritable(() => { wake(); return true })
        })
        aborted.wake = undefined
        if (aborted.v) break
      }
    }
    await chunks.return?.()
  } catch (err) {
    log.error({ err, requestId }, 'streamed answer failed; connection closed')
    if (!aborted.v) res.close()
  }
}

/** Answers a request whose body is still arriving, then ends the answer once the rest is read and dropped. */
async function replyDuringUpload (
  res: uWS.HttpResponse, aborted: { v: boolean }, body: RequestBody, reply: Reply, requestId: string, extra: Record<string, string>,
  close: boolean, log: Logger
): Promise<void> {
  writeReply(res, reply, requestId, extra, close, true, log)
  const arrived = await body.discardRest()
  if (aborted.v) return
  // an upload given up on (too large or stalled) is cut off with the answer's end unsent: the client has read the
  // status and the error by now. `end(…, true)` would write a `Connection` header into the chunked body; uWS
  // closes the connection itself after this answer when the request asked for it.
  if (!arrived) res.close()
  else res.cork(() => { res.end('', false) })
}

function errorReply (err: ApiError, requestId: string): Reply {
  const reply: Reply = { status: err.status, body: err.toJSON(requestId) }
  if (err.retryAfter !== undefined) reply.headers = { 'Retry-After': String(err.retryAfter) }
  return reply
}

/** Registers every route of the table on a uWS app and runs each request through one pipeline. */
export function createHttpServer (deps: GatewayDeps, routes: readonly RouteDef[]): HttpServer {
  const app = uWS.App()
  const server: HttpServer = { app, draining: false, inFlight: 0 }
  const clientAddresses = deps.clientAddresses
  const auditSink: AuditSink = { audit: deps.audit, security: deps.security, unrecorded: deps.metrics.auditUnrecorded, log: deps.log }
  const allowedOn = allowedMethods(routes)
  /**
   * A path value of the wrong shape for this route: 405 with `Allow` when other methods take this very path (`GET
   * /v1/messages/send` reaches `GET /v1/messages/:id`, but only `POST` takes that path), else the 404 given.
   */
  const wrongShape = (c: Compiled, ctx: MutableContext, notFound: ApiError): ApiError => {
    const path = c.def.path.replace(/:([A-Za-z_]+)/g, (_m, name: string) => encodeURIComponent(ctx.params[name] ?? ''))
    const allowed = allowedOn(path)
    if (allowed.length === 0) return notFound
    ctx.responseHeaders.Allow = allowed.join(', ')
    return new ApiError('method_not_allowed', `${methodName(c.def.method)} is not allowed on ${path}; use ${allowed.join(', ')}.`)
  }
  const compiled: Compiled[] = routes.map((def) => ({
    def,
    params: [...def.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]!),
    ...(def.body !== undefined ? { body: compileValidator(def.body) } : {}),
    query: compileQuery(def),
    refusesBody: def.method !== 'get' && def.method !== 'del' && def.body === undefined && def.bodyDoc === undefined,
    paramPatterns: Object.entries(def.paramPatterns ?? {}).map(([name, pattern]) => [name, new RegExp(pattern)]),
    label: `${methodName(def.method)} ${def.path}`,
    // Redis full: a read goes on under this process's own bucket, a change is refused (rate_limit.ts).
    whenStoreFull: def.whenStoreFull ?? (def.method === 'get' ? 'local' : 'refuse')
  }))

  /** The per-key bucket of an authenticated request: `limit` requests a minute, answered with the RateLimit headers. */
  async function meter (ctx: MutableContext, c: Compiled, keyId: string, limit: number): Promise<void> {
    const d = await deps.limiter.take(REDIS_KEYS.rateLimit(keyId, limit), limit, limit, c.whenStoreFull)
    deps.metrics.rateDecisions.api_key[d.allowed ? 'allowed' : 'limited'].inc()
    ctx.responseHeaders['RateLimit-Limit'] = String(limit)
    ctx.responseHeaders['RateLimit-Remaining'] = String(d.remaining)
    ctx.responseHeaders['RateLimit-Reset'] = String(d.resetS)
    if (!d.allowed) {
      throw new ApiError('rate_limited', `Rate limit of ${limit} requests per minute exceeded.`, { retryAfter: d.retryAfterS })
    }
  }

  /**
   * An operator route's key. A failed authentication goes through the failed-authentication throttle like any other;
   * an organisation key that authenticated is `403 forbidden`, not a failure.
   */
  async function authenticateOperatorRequest (ctx: MutableContext): Promise<OperatorContext> {
    const now = Date.now()
    try {
      ctx.operator = authenticateOperator(deps.cp, ctx.headers.authorization, now)
      return ctx.operator
    } catch (err) {
      if (err instanceof ApiError && err.code === 'forbidden') throw err
      deps.security.authFailed({
        transport: 'http', address: ctx.ip, credential: ctx.headers.authorization, reason: ApiError.from(err).message
      })
      throw await deps.authGuard.refusal(err, ctx.ip, ctx.headers.authorization, now)
    }
  }

  async function run (
    c: Compiled, res: uWS.HttpResponse, aborted: Aborted, ctx: MutableContext, body: RequestBody | undefined, start: number
  ): Promise<void> {
    let reply: Reply
    const bodyPromise = body?.whole
    try {
      if (server.draining) throw new ApiError('service_unavailable', 'The server is shutting down.', { retryAfter: 1 })
      if (c.def.permission === 'operator') {
        const operator = await authenticateOperatorRequest(ctx)
        if (c.def.unmetered !== true) await meter(ctx, c, operator.key.id, OPERATOR_REQUESTS_PER_MINUTE)
      } else if (c.def.permission !== null) {
        const now = Date.now()
        try {
          ctx.auth = authenticate(deps.cp, ctx.headers.authorization, now)
        } catch (err) {
          // a suspended organisation's key authenticated: its 403 is no failed authentication to count
          if (err instanceof ApiError && err.code === 'organization_suspended') throw err
          deps.security.authFailed({
            transport: 'http', address: ctx.ip, credential: ctx.headers.authorization, reason: ApiError.from(err).message
          })
          throw await deps.authGuard.refusal(err, ctx.ip, ctx.headers.authorization, now)
        }
        const auth = ctx.auth
        if (!hasPermission(auth.key, c.def.permission)) {
          throw new ApiError('forbidden', `This API key lacks the "${c.def.permission}" permission.`, {
            details: { required: c.def.permission, granted: auth.key.permissions }
          })
        }
        if (c.def.unmetered !== true) await meter(ctx, c, auth.key.id, planLimit(auth.org, deps.config.plans.enterpriseRateLimit))
      }
      if (c.def.idPrefix !== undefined && !isId(c.def.idPrefix, ctx.params.id ?? '')) {
        throw wrongShape(c, ctx, new ApiError('not_found', `Nothing has this id: ids here are ${c.def.idPrefix}_ ` +
          'followed by 26 lower-case letters and digits.'))
      }
      for (const [name, re] of c.paramPatterns) {
        if (!re.test(ctx.params[name] ?? '')) {
          throw wrongShape(c, ctx, new ApiError('not_found', `Nothing has this ${name}: it must match ${re.source}.`))
        }
      }
      c.query(ctx.query)
      if (bodyPromise !== undefined) {
        ctx.rawBody = await bodyPromise
        if (c.body !== undefined) ctx.body = assertValid(c.body, parseJson(ctx.rawBody, ctx.headers.contentType))
        else if (c.refusesBody && ctx.rawBody.length > 0) throw NO_BODY_TAKEN
      }
      reply = c.def.permission === 'operator' ? await c.def.handler(ctx) : await c.def.handler(ctx)
      if (c.def.audit !== undefined) await recordChange(auditSink, c.def, ctx, reply)
    } catch (err) {
      const apiErr = ApiError.from(err)
      if (apiErr.code === 'internal_error' && !aborted.v) {
        deps.log.error({ err, requestId: ctx.requestId, route: c.label }, 'request failed')
      }
      reply = errorReply(apiErr, ctx.requestId)
      if (c.def.audit !== undefined && ctx.audit.partial === true) {
        ctx.audit.changes.error = apiErr.code
        await recordChange(auditSink, c.def, ctx, reply)
      }
    }
    deps.metrics.request(c.label, reply.status, performance.now() - start)
    // A request stays in flight until its answer is written: a shutdown waits for a streamed answer (an export)
    // to end, instead of closing its connection half-way.
    try {
      if (aborted.v) return
      // While draining, every answer also closes its connection, so keep-alive clients move on instead of
      // sending their next request into a socket that is about to go away.
      if (reply.stream !== undefined && (body === undefined || body.arrived)) {
        await writeStream(res, aborted, reply, ctx.requestId, ctx.responseHeaders, deps.log)
        return
      }
      if (body === undefined || body.arrived) writeReply(res, reply, ctx.requestId, ctx.responseHeaders, server.draining, false, deps.log)
      else await replyDuringUpload(res, aborted, body, reply, ctx.requestId, ctx.responseHeaders, server.draining, deps.log)
    } finally {
      server.inFlight--
    }
  }

  for (const c of compiled) {
    const hasBody = c.def.method === 'post' || c.def.method === 'patch' || c.def.method === 'put'
    app[c.def.method](c.def.path, (res, req) => {
      const start = performance.now()
      const aborted: Aborted = { v: false }
      // The body must be taken as it streams in, before any await, or uWS drops it.
      const body = hasBody ? new RequestBody(res, Number(req.getHeader('content-length') || 0), c.def.maxBodyBytes) : undefined
      res.onAborted(() => {
        aborted.v = true
        body?.abort()
        aborted.wake?.()
      })
      server.inFlight++
      const incoming = req.getHeader('x-request-id')
      const params: Record<string, string> = {}
      for (let i = 0; i < c.params.length; i++) {
        const raw = req.getParameter(i) ?? ''
        try { params[c.params[i]!] = decodeURIComponent(raw) } catch { params[c.params[i]!] = raw }
      }
      const query = req.getQuery()
      const ctx: MutableContext = {
        deps,
        requestId: REQUEST_ID.test(incoming) ? incoming : newId('req'),
        ip: clientAddresses.of(
          Buffer.from(res.getRemoteAddressAsText()).toString(),
          clientAddresses.readsForwardedFor ? req.getHeader('x-forwarded-for') : ''
        ),
        params,
        query: query === undefined || query === '' ? EMPTY_QUERY : new URLSearchParams(query),
        headers: {
          authorization: req.getHeader('authorization'),
          contentType: req.getHeader('content-type'),
          idempotencyKey: req.getHeader('idempotency-key'),
          userAgent: req.getHeader('user-agent'),
          host: req.getHeader('host')
        },
        body: undefined,
        rawBody: EMPTY,
        auth: NO_AUTH,
        operator: NO_OPERATOR,
        responseHeaders: {},
        // only a route that records a change gets a note of its own: the send path allocates nothing for it
        audit: c.def.audit !== undefined ? emptyNote() : NO_NOTE
      }
      void run(c, res, aborted, ctx, body, start)
    })
  }

  app.any('/*', (res, req) => {
    let aborted = false
    res.onAborted(() => { aborted = true })
    const incoming = req.getHeader('x-request-id')
    const requestId = REQUEST_ID.test(incoming) ? incoming : newId('req')
    const url = req.getUrl()
    const allowed = allowedOn(url)
    const err = allowed.length > 0
      ? new ApiError('method_not_allowed', `${req.getCaseSensitiveMethod()} is not allowed on ${url}; use ${allowed.join(', ')}.`)
      : new ApiError('not_found', `No endpoint at ${url}.`)
    const reply = errorReply(err, requestId)
    if (allowed.length > 0) reply.headers = { Allow: allowed.join(', ') }
    deps.metrics.request('unmatched', reply.status, 0)
    if (!aborted) writeReply(res, reply, requestId, {}, false, false, deps.log)
  })
  return server
}
