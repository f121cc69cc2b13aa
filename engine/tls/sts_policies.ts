import { Resolver } from 'node:dns/promises'
import { safeLookup } from './safe_lookup.ts'
import { AnswerTooLargeError, failureCode, httpsCall } from './tls_https.ts'
import { parseStsPolicy, parseStsRecord, type StsPolicy } from './sts_policy.ts'
import type { TlsResultType } from './outbound_tls.ts'

/**
 * The MTA-STS policies of recipient domains (RFC 8461), looked up and cached per thread so that the hot path costs
 * no round trip: a domain's `_mta-sts` TXT record is read at most once every RECHECK_MS, and the policy file is
 * fetched again only when the record's `id` changes or the policy's `max_age` ends. Concurrent callers for one
 * domain share one look-up.
 *
 * The policy is fetched from `https://mta-sts.<domain>/.well-known/mta-sts.txt` with the certificate verified
 * (Node's roots plus `OB_SMTP_CA_FILE`), no redirect followed, at most MAX_POLICY_BYTES in FETCH_TIMEOUT_MS, and a
 * `text/plain` answer required. The policy host is resolved through `OB_DNS_SERVERS` and, unless
 * `OB_SMTP_ALLOW_PRIVATE`, refused on a non-public address, as MX hosts are: the domain is the tenant's to choose.
 * A policy that cannot be fetched while a cached one is still within its max_age keeps the cached one (§5.1).
 */
export type StsLookup =
  | { kind: 'none' }
  | { kind: 'policy', policy: StsPolicy }
  /** The domain publishes MTA-STS, but no valid policy could be had: delivered as without one, reported (TLS-RPT). */
  | { kind: 'failed', type: TlsResultType, reason: string }

export const RECHECK_MS = 300_000 // 5 min: a changed policy id is noticed this late at most
export const FAILED_RETRY_MS = 60_000 // a failed fetch is tried again after 1 min, not per message
export const MAX_POLICY_BYTES = 64 * 1024 // RFC 8461 §3.3 leaves the limit to the sender; real policies are < 1 KB
export const FETCH_TIMEOUT_MS = 10_000
const MAX_DOMAINS = 10_000
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA'])

interface Entry { checkedAt: number, answer: StsLookup, id?: string, expiresAt?: number }

export interface StsPoliciesOptions {
  dnsServers: readonly string[]
  allowPrivate: boolean
  /** Trusted CAs (outbound_tls.ts trustedCas); undefined: Node's roots. */
  ca: string[] | undefined
  /** Port of the policy hosts: 443, or a test's server. */
  port: number
  now?: () => number
}

export class PolicyFetchError extends Error {
  constructor (readonly code: 'sts_fetch_failed', readonly type: TlsResultType, message: string, opts?: ErrorOptions) {
    super(message, opts)
    this.name = 'PolicyFetchError'
  }
}

export class StsPolicies {
  private readonly resolver = new Resolver({ timeout: 5000, tries: 2 })
  private readonly cache = new Map<string, Entry>()
  private readonly asking = new Map<string, Promise<StsLookup>>()
  private readonly now: () => number

  constructor (private readonly opts: StsPoliciesOptions) {
    if (opts.dnsServers.length > 0) this.resolver.setServers([...opts.dnsServers])
    this.now = opts.now ?? Date.now
  }

  /** The policy of a recipient domain, from the cache while it is fresh. Never throws. */
  async lookup (domain: string): Promise<StsLookup> {
    const d = domain.toLowerCase()
    const hit = this.cache.get(d)
    if (hit !== undefined && this.now() - hit.checkedAt < (hit.answer.kind === 'failed' ? FAILED_RETRY_MS : RECHECK_MS)) return hit.answer
    let asked = this.asking.get(d)
    if (asked === undefined) {
      asked = this.refresh(d, hit).finally(() => this.asking.delete(d))
      this.asking.set(d, asked)
    }
    return await asked
  }

  private async refresh (domain: string, old: Entry | undefined): Promise<StsLookup> {
    const now = this.now()
    const cached = old?.answer.kind === 'policy' && (old.expiresAt ?? 0) > now ? old : undefined
    let id: string | undefined
    try {
      id = parseStsRecord((await this.resolver.resolveTxt(`_mta-sts.${domain}`)).map((chunks) => chunks.join('')))
    } catch (err) {
      if (!NOT_FOUND.has((err as { code?: string }).code ?? '')) {
        // a resolver that does not answer: keep what we know, ask again after FAILED_RETRY_MS
        return this.keep(domain, cached ?? { checkedAt: now, answer: { kind: 'none' } }, now - RECHECK_MS + FAILED_RETRY_MS)
      }
    }
    // no record (any more): a cached policy stays valid until its max_age ends (RFC 8461 §5.1)
    if (id === undefined) return this.keep(domain, cached ?? { checkedAt: now, answer: { kind: 'none' } }, now)
    if (cached !== undefined && cached.id === id) return this.keep(domain, cached, now)
    try {
      const policy = await this.fetch(domain)
      return this.keep(domain, { checkedAt: now, answer: { kind: 'policy', policy }, id, expiresAt: now + policy.maxAgeS * 1000 }, now)
    } catch (err) {
      if (cached !== undefined) return this.keep(domain, cached, now - RECHECK_MS + FAILED_RETRY_MS)
      const e = err instanceof PolicyFetchError ? err : new PolicyFetchError('sts_fetch_failed', 'sts-policy-fetch-error', String(err))
      return this.keep(domain, { checkedAt: now, answer: { kind: 'failed', type: e.type, reason: e.message } }, now)
    }
  }

  private keep (domain: string, entry: Entry, checkedAt: number): StsLookup {
    if (this.cache.size >= MAX_DOMAINS && !this.cache.has(domain)) this.cache.clear()
    this.cache.set(domain, { ...entry, checkedAt })
    return entry.answer
  }

  private async fetch (domain: string): Promise<StsPolicy> {
    const host = `mta-sts.${domain}`
    const fail = (type: TlsResultType, message: string, cause?: unknown): PolicyFetchError =>
      new PolicyFetchError('sts_fetch_failed', type, `${host}: ${message}`, cause !== undefined ? { cause } : undefined)
    let text: string
    try {
      const answer = await httpsCall(new URL(`https://${host}:${this.opts.port}/.well-known/mta-sts.txt`), {
        method: 'GET',
        headers: { accept: 'text/plain' },
        timeoutMs: FETCH_TIMEOUT_MS,
        maxBytes: MAX_POLICY_BYTES,
        lookup: safeLookup(this.resolver, this.opts.allowPrivate),
        ca: this.opts.ca,
        check: (status, contentType) => {
          if (status !== 200) throw fail('sts-policy-fetch-error', `HTTP ${status} (redirects are not followed)`)
          if (!/^text\/plain\b/i.test(contentType)) throw fail('sts-policy-invalid', 'the policy is not served as text/plain')
        }
      })
      text = answer.body.toString('utf8')
    } catch (err) {
      if (err instanceof PolicyFetchError) throw err
      if (err instanceof AnswerTooLargeError) throw fail('sts-policy-invalid', `the policy is larger than ${MAX_POLICY_BYTES} bytes`)
      // a certificate that does not verify is its own result type (RFC 8460 §4.3.2.1)
      const webpki = /CERT|SIGNATURE|ISSUER|SELF_SIGNED|ALTNAME/.test(failureCode(err))
      throw fail(webpki ? 'sts-webpki-invalid' : 'sts-policy-fetch-error', (err as Error).message, err)
    }
    const parsed = parseStsPolicy(text)
    if ('invalid' in parsed) throw new PolicyFetchError('sts_fetch_failed', 'sts-policy-invalid', `${host}: ${parsed.invalid}`)
    return parsed
  }
}
