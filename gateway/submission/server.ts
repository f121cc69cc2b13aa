import type { Readable } from 'node:stream'
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerSession } from 'smtp-server'
import {
  ADDRESS_PATTERN, ApiError, MAX_RECIPIENTS, REDIS_KEYS, addressDomain, bareAddress, clientIdentity, isSuspended, newId,
  TRANSACTIONAL_STREAM, isBroadcast
} from '../../protocol/mod.ts'
import { authenticate, hasPermission, type AuthContext } from '../auth.ts'
import type { GatewayDeps } from '../deps.ts'
import { planLimit } from '../server.ts'
import { normaliseLineEnds, readSubmitted } from './mime.ts'
import { assertPartCount } from './mime_parts.ts'
import { SubmissionQueue } from './queue.ts'
import { SessionLimits, SmtpReply } from '../../stores/smtp_server/mod.ts'
import type { SubmissionTls } from './tls.ts'

/** 10 MB, as for the HTTP send; announced with SIZE, 552 past it. */
export const MAX_SUBMISSION_BYTES = 10 * 1024 * 1024
const ADDRESS = new RegExp(ADDRESS_PATTERN)

export type SubmissionDeps = Pick<
  GatewayDeps, 'config' | 'log' | 'cp' | 'redis' | 'limiter' | 'authGuard' | 'security' | 'send' | 'idempotency' | 'metrics'
>

/** The authenticated key, kept on the session by smtp-server (`session.user`). */
function authOf (session: SMTPServerSession): AuthContext {
  return session.user as unknown as AuthContext
}

/**
 * 256 MB: what all sessions of a process together may hold of messages still arriving. Each message is held whole
 * until it is checked and queued; past this a message is drained instead and answered 451 (try again shortly),
 * so many large uploads at once cannot exhaust the gateway's memory.
 */
export const MAX_BUFFERED_BYTES = 256 * 1024 * 1024

/** Bytes of DATA held by every session of the process, against `max`. */
export class DataBudget {
  held = 0
  constructor (readonly max = MAX_BUFFERED_BYTES) {}
}

/**
 * DATA in memory up to `max` bytes; past it the rest is only drained (smtp-server then answers 552). `busy` when
 * the process-wide budget ran out while reading.
 */
export async function readData (stream: Readable, max: number, budget: DataBudget): Promise<Buffer | 'too_large' | 'busy'> {
  const chunks: Buffer[] = []
  let bytes = 0
  let held = 0
  let busy = false
  try {
    for await (const chunk of stream) {
      const c = chunk as Buffer
      bytes += c.length
      if (busy || bytes > max) continue
      if (budget.held + c.length > budget.max) {
        busy = true
        budget.held -= held
        held = 0
        chunks.length = 0
        continue
      }
      budget.held += c.length
      held += c.length
      chunks.push(c)
    }
    if (bytes > max) return 'too_large'
    return busy ? 'busy' : Buffer.concat(chunks, bytes)
  } finally {
    budget.held -= held
  }
}

/**
 * A suspended organisation's key: `525 5.7.13` (RFC 4954, "user account disabled") at AUTH, `550 5.7.13` for a
 * transaction of a session that authenticated before the suspension. Permanent: retrying does not help until the
 * operator resumes the organisation.
 */
function suspendedReply (code: 525 | 550): SmtpReply {
  return new SmtpReply(code, 'The organisation of this API key is suspended by the operator', { enhanced: '5.7.13' })
}

/** The submission server's smtp-server, hooks and all; `listen` is main's. */
export function createSubmissionServer (deps: SubmissionDeps, tls: SubmissionTls): { server: SMTPServer, limits: SessionLimits } {
  const { config, cp, log } = deps
  const settings = config.submission
  const queue = new SubmissionQueue(deps.send, deps.idempotency)
  const limits = new SessionLimits(settings, {
    tooManyFromAddress: () => new SmtpReply(421, 'Too many connections from your address, try again later', { enhanced: '4.7.0' }),
    deadlineText: '4.4.2 Session time limit reached, closing connection'
  })
  const budget = new DataBudget()

  async function onAuth (auth: SMTPServerAuthentication, session: SMTPServerSession): Promise<AuthContext> {
    const credential = `Bearer ${auth.password ?? ''}`
    const address = clientIdentity(session.remoteAddress) ?? session.remoteAddress
    const now = Date.now()
    let ctx: AuthContext
    try {
      ctx = authenticate(cp, credential, now)
    } catch (err) {
      if (err instanceof ApiError && err.code === 'organization_suspended') throw suspendedReply(525)
      deps.security.authFailed({ transport: 'smtp', address, credential, reason: ApiError.from(err).message })
      const refusal = await deps.authGuard.refusal(err, address, credential, now)
      if (refusal instanceof ApiError && refusal.code === 'rate_limited') {
        throw new SmtpReply(454, `Too many failed authentications; try again in ${refusal.retryAfter ?? 60} s`, { enhanced: '4.7.0' })
      }
      // The same reason the HTTP API's 401 gives (unknown, malformed, revoked, past its rotation grace).
      throw new SmtpReply(535, `Authentication credentials invalid: ${ApiError.from(err).message} The password must be an API key.`, {
        enhanced: '5.7.8'
      })
    }
    if (!hasPermission(ctx.key, 'send')) throw new SmtpReply(535, 'This API key lacks the "send" permission', { enhanced: '5.7.8' })
    return ctx
  }

  async function onMailFrom (sender: string, session: SMTPServerSession): Promise<void> {
    const auth = authOf(session)
    // Read again at every transaction: a session opened before the operator suspended or deleted the organisation
    // (or changed its plan) sends nothing more under the old record.
    const org = cp.orgs.get(auth.org.id)
    if (org === undefined) throw new SmtpReply(550, 'The organisation of this API key no longer exists', { enhanced: '5.7.1' })
    if (isSuspended(org)) throw suspendedReply(550)
    auth.org = org
    const domain = auth.domain
    if (sender === '' || addressDomain(sender) !== domain.name.toLowerCase()) {
      throw new SmtpReply(553, `The sender must be an address on ${domain.name}, the domain of this API key`, { enhanced: '5.7.1' })
    }
    if (domain.status !== 'verified') {
      throw new SmtpReply(553, `The domain ${domain.name} is not verified yet; publish its DNS records and call ` +
        `POST /v1/domains/${domain.id}/verify`, { enhanced: '5.7.1' })
    }
    // The per-key bucket of the HTTP API: each message takes one request's worth.
    const limit = planLimit(auth.org, config.plans.enterpriseRateLimit)
    let d
    try {
      d = await deps.limiter.take(REDIS_KEYS.rateLimit(auth.key.id, limit), limit, limit, 'refuse')
    } catch (err) {
      if (err instanceof ApiError && err.code === 'store_full') {
        throw new SmtpReply(451, 'The data store is full; try again later', { enhanced: '4.3.1', cause: err })
      }
      throw new SmtpReply(451, 'The rate limiter is unavailable; try again shortly', { enhanced: '4.3.0', cause: err })
    }
    if (!d.allowed) {
      throw new SmtpReply(451, `Rate limit of ${limit} messages per minute exceeded; try again in ${d.retryAfterS} s`,
        { enhanced: '4.7.1' })
    }
  }

  function onRcptTo (rcpt: string, session: SMTPServerSession): void {
    const auth = authOf(session)
    // RFC 5321 §4.5.3.1.10: 452 asks the client to send the rest in another transaction.
    if (session.envelope.rcptTo.length >= MAX_RECIPIENTS) {
      throw new SmtpReply(452, `Too many recipients: at most ${MAX_RECIPIENTS} per message`, { enhanced: '4.5.3' })
    }
    if (!ADDRESS.test(rcpt)) {
      throw new SmtpReply(553, 'Recipient address not accepted: it must be addr@domain in ASCII', { enhanced: '5.1.3' })
    }
    // The sandbox simulates events, not list state: its keys are not held to the suppression list. The stream is
    // not known before DATA (X-Outbox-Stream): entries for every stream are refused here, a stream's own in onData.
    if (auth.key.environment === 'live' && cp.isSuppressed(auth.org.id, bareAddress(rcpt))) {
      throw new SmtpReply(550, 'Recipient is on this organisation\'s suppression list', { enhanced: '5.1.1' })
    }
  }

  async function onData (stream: Readable, session: SMTPServerSession): Promise<string> {
    const data = await readData(stream, MAX_SUBMISSION_BYTES, budget)
    if (data === 'too_large') throw new SmtpReply(552, `Message exceeds the limit of ${MAX_SUBMISSION_BYTES} bytes`, { enhanced: '5.3.4' })
    if (data === 'busy') throw new SmtpReply(451, 'The server is receiving too much mail at once; try again shortly', { enhanced: '4.3.1' })
    const auth = authOf(session)
    const id = newId('msg')
    const normalised = normaliseLineEnds(data)
    const mail = readSubmitted(normalised, { messageId: `<${id}@${auth.domain.name}>`, date: new Date() })
    await assertPartCount(normalised)
    if (addressDomain(mail.fromAddress) !== auth.domain.name.toLowerCase()) {
      throw new SmtpReply(553, `The From header must be an address on ${auth.domain.name}, the domain of this API key`,
        { enhanced: '5.7.1' })
    }
    const streamId = mail.stream ?? auth.key.default_stream ?? TRANSACTIONAL_STREAM
    if (!cp.streams.exists(auth.org.id, streamId)) {
      throw new SmtpReply(554, `This organisation has no message stream ${streamId}`, { enhanced: '5.6.0' })
    }
    const all = [...new Set(session.envelope.rcptTo.map((r) => bareAddress(r.address)))]
    const live = auth.key.environment === 'live'
    const suppressed = live && isBroadcast(streamId) ? all.filter((a) => cp.isSuppressed(auth.org.id, a, streamId)) : []
    const envelope = suppressed.length === 0 ? all : all.filter((a) => !suppressed.includes(a))
    if (envelope.length === 0) {
      throw new SmtpReply(550, `Every recipient is on this organisation's suppression list for the stream ${streamId}`,
        { enhanced: '5.1.1' })
    }
    const r = await queue.queue(auth, envelope, { ...mail, stream: streamId }, suppressed, id)
    deps.metrics.smtpSubmissions.inc()
    return r.duplicate ? `2.0.0 queued as ${r.id} (this Message-ID was already queued; not sent again)` : `2.0.0 queued as ${r.id}`
  }

  /** smtp-server callbacks from promises; an unexpected error is logged and answered 451, never passed on raw. */
  function settle<T> (p: Promise<T>, callback: (err: Error | null, value?: T) => void, what: string): void {
    p.then((v) => callback(null, v), (err: unknown) => {
      if (err instanceof SmtpReply) return callback(err)
      log.error({ err, stage: what }, 'SMTP submission failed')
      callback(new SmtpReply(451, 'Temporary local problem; try again later', { enhanced: '4.3.0' }))
    })
  }

  const server = new SMTPServer({
    banner: 'Outbox submission',
    name: new URL(config.http.publicUrl).hostname,
    key: tls.key,
    cert: tls.cert,
    authMethods: ['PLAIN', 'LOGIN'],
    allowInsecureAuth: settings.insecureAuth,
    // Each reply carries its own enhanced code (SmtpReply): smtp-server would pick them by reply code alone.
    hideENHANCEDSTATUSCODES: true,
    hideDSN: true,
    // Addresses are ASCII, as in the HTTP send.
    hideSMTPUTF8: true,
    size: MAX_SUBMISSION_BYTES,
    ...({ rejectOversized: true } as object),
    maxClients: settings.maxConnections,
    socketTimeout: settings.idleTimeoutMs,
    closeTimeout: config.shutdownTimeoutMs,
    logger: false,
    onConnect: limits.onConnect,
    onClose: limits.onClose,
    onAuth (auth, session, callback) {
      settle(onAuth(auth, session).then((user) => ({ user: user as unknown as string })), callback, 'auth')
    },
    onMailFrom (address, session, callback) {
      settle(onMailFrom(address.address, session), callback, 'mail')
    },
    onRcptTo (address, session, callback) {
      try {
        onRcptTo(address.address, session)
        callback()
      } catch (err) {
        callback(err as Error)
      }
    },
    onData (stream, session, callback) {
      const reply = onData(stream, session)
      // smtp-server needs the whole DATA read before it answers; a refusal found early still drains the rest.
      reply.catch(() => { stream.resume() })
      stream.once('end', () => { limits.deferWhile(session.id, reply) })
      settle(reply, (err, text) => { err !== null ? callback(err) : callback(null, text) }, 'data')
    }
  })
  limits.attach(server)
  server.on('error', (err) => log.warn({ err }, 'SMTP submission error'))
  return { server, limits }
}
