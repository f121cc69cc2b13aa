import type { FailureCategory } from '../../protocol/mod.ts'

/**
 * The one place that turns what happened to an SMTP transaction into an outcome. Pure: it reads only the
 * fields nodemailer (and our MX look-up) put on errors — `responseCode`, `response`, `code`, `command`.
 *
 * | what happened                                          | outcome                                  |
 * |--------------------------------------------------------|------------------------------------------|
 * | server answered 2xx to DATA                            | delivered, smtp_response = reply         |
 * | 5xx at any step (MAIL, RCPT, DATA)                     | bounced hard, bounce_code = code         |
 * | recipient domain has no mail host (NXDOMAIN/no A/AAAA) | bounced hard, 550 5.1.2                  |
 * | recipient domain publishes a null MX (RFC 7505)        | bounced hard, 556 5.1.10                 |
 * | every mail host is on a non-public address             | bounced hard, 550 5.4.4, no suppression  |
 * | no mail host of the bound source's address family      | deferred (a source of the other family can send) |
 * | 4xx at any step                                        | deferred                                 |
 * | STARTTLS refused or failed (TLS required)              | deferred, whatever the reply             |
 * | connection refused/reset/timeout, TLS, DNS failure     | deferred                                 |
 * | local address cannot be bound (EADDRNOTAVAIL)          | deferred                                 |
 * | message cannot be built (bad address, file access)     | failed                                   |
 * | anything unrecognised                                  | deferred (retrying is the safe side)     |
 */
export type RecipientOutcome =
  | { kind: 'delivered', response: string }
  /**
   * `suppress: false`: Outbox refused the destination itself (no server answered), which says nothing about the
   * address, so the bounce does not put it on the suppression list whatever its category. `operator`: no reply, an
   * operator bounced the waiting recipient (engine/queue_holds.ts): its category is `operator`.
   */
  | { kind: 'bounced', code: string, message: string, suppress?: false, operator?: true }
  | { kind: 'deferred', response: string }
  | { kind: 'throttled', retryAfterMs: number }
  | { kind: 'failed', category: FailureCategory, reason: string }
  /**
   * No transaction, or one this process reset: the message's shard is no longer this process's to deliver (its lease
   * term ended or another process holds it; engine/leases/fences.ts). The shard's owner carries the recipient on.
   */
  | { kind: 'moved' }

/** The error fields classification reads; everything else about an error is ignored. */
export interface SmtpErrorLike {
  code?: unknown
  responseCode?: unknown
  response?: unknown
  command?: unknown
  message?: unknown
}

/** Codes our MX look-up sets (engine/actor/mx.ts) for a domain that cannot receive mail at all. */
export const NO_MAIL_HOST = 'ENOMAILHOST'
export const NULL_MX = 'ENULLMX'
/** Every mail host of the domain is `localhost` or on a loopback, private, link-local or other non-public address. */
export const NON_PUBLIC_MAIL_HOST = 'ENONPUBLICMAILHOST'
/**
 * A source bound to one address family found mail hosts of the other family only. Nothing is wrong with the domain:
 * the router sends from a source of the other family instead; should it reach classification, it is deferred.
 */
export const NO_HOST_FOR_FAMILY = 'ENOHOSTFORFAMILY'

const BUILD_ERRORS = new Set(['EFILEACCESS', 'EURLACCESS', 'ECONFIG', 'EMAXRECIPIENTS'])

function text (v: unknown): string {
  return typeof v === 'string' ? v.replace(/\s+/g, ' ').trim() : ''
}

/** Outcome of a `sendMail` that resolved: nodemailer resolves only when the server accepted the data. */
export function classifyAccepted (info: { response?: unknown }): RecipientOutcome {
  return { kind: 'delivered', response: text(info.response) || '250 OK' }
}

export function classifyError (err: SmtpErrorLike): RecipientOutcome {
  const code = typeof err.code === 'string' ? err.code : ''
  const reply = typeof err.responseCode === 'number' ? err.responseCode : Number.NaN
  const response = text(err.response)
  const message = text(err.message)
  // A refused or failed STARTTLS (TLS required and not offered) speaks of the connection, not of the recipient
  if (code === 'ETLS' || err.command === 'STARTTLS') {
    return { kind: 'deferred', response: `ETLS: STARTTLS failed: ${response || message}` }
  }
  if (reply >= 500 && reply < 600) return { kind: 'bounced', code: String(reply), message: response || message }
  if (reply >= 400 && reply < 500) return { kind: 'deferred', response: response || `${reply} ${message}` }
  if (code === NO_MAIL_HOST) return { kind: 'bounced', code: '550', message: `5.1.2 ${message}` }
  if (code === NULL_MX) return { kind: 'bounced', code: '556', message: `5.1.10 ${message}` }
  // X.4.4 "unable to route": a `domain` bounce
  if (code === NON_PUBLIC_MAIL_HOST) return { kind: 'bounced', code: '550', message: `5.4.4 ${message}`, suppress: false }
  if (code === NO_HOST_FOR_FAMILY) return { kind: 'deferred', response: `${code}: ${message}` }
  if (BUILD_ERRORS.has(code) || (code === 'EENVELOPE' && Number.isNaN(reply))) {
    return { kind: 'failed', category: 'unbuildable', reason: message || code }
  }
  const what = code !== '' ? `${code}: ${message}` : message
  return { kind: 'deferred', response: what || 'delivery failed for an unknown reason' }
}

/**
 * Whether a failed attempt should go on to the next MX host at once: only when no server answered at all
 * (refused, unreachable, timed out, TLS or socket failure). A server's 4xx or 5xx speaks for the domain.
 */
export function tryNextHost (err: SmtpErrorLike): boolean {
  return typeof err.responseCode !== 'number' && classifyError(err).kind === 'deferred'
}
