import { readFileSync } from 'node:fs'
import { createSecureContext, rootCertificates } from 'node:tls'
import { isIP } from 'node:net'
import { Agent, type Dispatcher } from 'undici'
import type { Config } from '../config/mod.ts'
import { isBlockedAddress, type InternalErrorCode } from '../protocol/mod.ts'
import { guardedLookup, makeResolve, SsrfBlockedError } from './ssrf.ts'

export const USER_AGENT = 'Outbox-Webhooks/1'
/** Response bodies are read only to free the socket for keep-alive; past this we stop reading and close. */
const MAX_RESPONSE_BYTES = 64 * 1024
/** How much of a response body the delivery log keeps, to show what the receiver said. */
export const RESPONSE_EXCERPT_BYTES = 1024
const KEEP_ALIVE_MS = 30_000

/** Past MAX_RESPONSE_BYTES the response is not read further and its connection is closed. */
class ResponseTooLargeError extends Error {
  readonly code = 'response_too_large' satisfies InternalErrorCode
}

export interface AttemptResult {
  /** 0 when no HTTP status was received. */
  statusCode: number
  durationMs: number
  /** The first RESPONSE_EXCERPT_BYTES of the response body (as UTF-8); null when no response came. */
  responseBody: string | null
  /** null on success; else a short code: http_<status>, timeout, ssrf_blocked, connection_refused, tls_error, … */
  error: string | null
}

/** Maps an undici / socket error to the short code shown in the delivery log. */
export function errorCode (err: unknown): string {
  const e = err as { code?: string, name?: string, cause?: unknown }
  if (err instanceof SsrfBlockedError || e?.code === 'ssrf_blocked') return 'ssrf_blocked'
  if (e?.cause !== undefined && (e.cause as { code?: string })?.code === 'ssrf_blocked') return 'ssrf_blocked'
  switch (e?.code) {
    case 'UND_ERR_HEADERS_TIMEOUT': case 'UND_ERR_BODY_TIMEOUT': case 'UND_ERR_CONNECT_TIMEOUT': return 'timeout'
    case 'ECONNREFUSED': return 'connection_refused'
    case 'ECONNRESET': case 'UND_ERR_SOCKET': case 'EPIPE': return 'connection_reset'
    case 'ENOTFOUND': case 'EAI_AGAIN': case 'ENODATA': case 'ESERVFAIL': return 'dns_error'
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'unreachable'
    default:
      if (typeof e?.code === 'string' && /CERT|SSL|TLS|SELF_SIGNED|ERR_TLS/i.test(e.code)) return 'tls_error'
      return 'request_failed'
  }
}

/**
 * HTTPS to webhook endpoints: an undici Agent per organisation, which keeps a keep-alive pool per origin (a TLS
 * handshake per event would cap a process at ~800 deliveries/s). An organisation's pool to an origin is its own,
 * so one whose receiver is slow fills only its own connections, never another organisation's to the same host
 * (an integration hub serving many). Redirects are not followed; only 2xx counts as success.
 */
/** `refused`: the error an attempt to this URL ends with before any connection, or null. */
interface Target { origin: string, path: string, refused: string | null }

const BASE_HEADERS = ['content-type', 'application/json', 'user-agent', USER_AGENT]

/** An organisation's agent: requests in flight, and when it was last used (idle agents are closed). */
interface OrgAgent { agent: Agent, inFlight: number, lastUsed: number }

export class WebhookHttpClient {
  private readonly agents = new Map<string, OrgAgent>()
  private readonly agentOptions: Agent.Options
  private readonly sweeper: NodeJS.Timeout
  private readonly targets = new WeakMap<URL, Target>()
  private readonly timeoutMs: number
  private readonly allowPrivate: boolean

  constructor (config: Config) {
    this.timeoutMs = config.webhook.timeoutMs
    this.allowPrivate = config.webhook.allowPrivate
    // One secure context for every connection: building one from ~140 root certificates costs ~50 ms of CPU.
    const secureContext = config.webhook.caFile !== undefined
      ? createSecureContext({ ca: [...rootCertificates, readFileSync(config.webhook.caFile, 'utf8')] })
      : undefined
    this.agentOptions = {
      connections: config.webhook.endpointConcurrency,
      pipelining: 1,
      keepAliveTimeout: KEEP_ALIVE_MS,
      keepAliveMaxTimeout: KEEP_ALIVE_MS,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: {
        timeout: this.timeoutMs,
        lookup: guardedLookup(makeResolve(config.dnsServers), this.allowPrivate),
        ...(secureContext !== undefined ? { secureContext } : {})
      }
    }
    // An agent idle for longer than its sockets live holds nothing worth keeping.
    this.sweeper = setInterval(() => { this.sweep(Date.now()) }, KEEP_ALIVE_MS)
    this.sweeper.unref()
  }

  private agentOf (orgId: string): OrgAgent {
    let a = this.agents.get(orgId)
    if (a === undefined) {
      a = { agent: new Agent(this.agentOptions), inFlight: 0, lastUsed: 0 }
      this.agents.set(orgId, a)
    }
    return a
  }

  private sweep (now: number): void {
    for (const [orgId, a] of this.agents) {
      if (a.inFlight === 0 && now - a.lastUsed > KEEP_ALIVE_MS) {
        this.agents.delete(orgId)
        a.agent.close().catch(() => {})
      }
    }
  }

  /**
   * One POST attempt; never throws. It uses undici's dispatch interface directly: the status decides, and
   * the response body is only read (up to 64 KB, then the connection is closed) to free the connection, so a
   * response stream per request would be pure overhead. `headers`: extra headers as name, value, name, value….
   * `orgId`: whose connections carry it.
   */
  async post (orgId: string, url: URL, body: string | Buffer, headers: readonly string[]): Promise<AttemptResult> {
    const start = performance.now()
    let excerpt: Buffer[] | null = null
    let excerptBytes = 0
    const done = (statusCode: number, error: string | null): AttemptResult => ({
      statusCode,
      durationMs: Math.round(performance.now() - start),
      responseBody: statusCode === 0 ? null : excerpt === null ? '' : Buffer.concat(excerpt).toString('utf8'),
      error
    })
    const t = this.target(url)
    if (t.refused !== null) return done(0, t.refused)
    const a = this.agentOf(orgId)
    a.inFlight++
    return await new Promise<AttemptResult>((resolve) => {
      let status = 0
      let received = 0
      let abort: ((err?: Error) => void) | undefined
      let settled = false
      const byStatus = (): void => settle(status, status >= 200 && status < 300 ? null : `http_${status}`)
      const settle = (statusCode: number, error: string | null): void => {
        if (settled) return
        settled = true
        a.inFlight--
        a.lastUsed = Date.now()
        resolve(done(statusCode, error))
      }
      const handler: Dispatcher.DispatchHandler = {
        onConnect: (a) => { abort = a },
        onHeaders: (statusCode) => { status = statusCode; return true },
        onData: (chunk) => {
          if (excerptBytes < RESPONSE_EXCERPT_BYTES) {
            const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - excerptBytes)
            if (excerpt === null) excerpt = []
            excerpt.push(Buffer.from(part)) // a copy: undici may reuse the chunk's memory
            excerptBytes += part.length
          }
          received += chunk.length
          if (received > MAX_RESPONSE_BYTES) { byStatus(); abort?.(new ResponseTooLargeError()) }
          return true
        },
        onComplete: byStatus,
        // Once a status arrived it decides the outcome, whatever happens to the rest of the body.
        onError: (err) => { if (status !== 0) byStatus(); else settle(0, errorCode(err)) }
      }
      a.agent.dispatch({ origin: t.origin, path: t.path, method: 'POST', headers: [...BASE_HEADERS, ...headers], body }, handler)
    })
  }

  /** What a URL's attempts need, worked out once per URL object (the dispatcher keeps one per webhook URL). */
  private target (url: URL): Target {
    let t = this.targets.get(url)
    if (t === undefined) {
      // An IP literal never goes through the lookup, so it is checked here.
      const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
      const refused = url.protocol !== 'https:'
        ? 'https_required'
        : !this.allowPrivate && isIP(host) !== 0 && isBlockedAddress(host) ? 'ssrf_blocked' : null
      t = { origin: url.origin, path: url.pathname + url.search, refused }
      this.targets.set(url, t)
    }
    return t
  }

  async close (): Promise<void> {
    clearInterval(this.sweeper)
    await Promise.all([...this.agents.values()].map(async (a) => { await a.agent.close().catch(() => {}) }))
  }

  /** Drops open sockets at once (a drain past its deadline). */
  async destroy (): Promise<void> {
    clearInterval(this.sweeper)
    await Promise.all([...this.agents.values()].map(async (a) => { await a.agent.destroy().catch(() => {}) }))
  }
}
