import { Resolver } from 'node:dns/promises'
import { isBlockedAddress, isLocalhostName } from '../../protocol/mod.ts'
import { NO_MAIL_HOST, NON_PUBLIC_MAIL_HOST, NULL_MX } from './classify.ts'

/**
 * Where mail for a domain goes: its MX hosts in preference order (RFC 5321 §5.1), or the domain itself when it
 * has no MX (implicit MX). Each host is resolved to an IPv4 address with the same resolver, so a test (or an
 * operator) that sets `OB_DNS_SERVERS` controls the whole path. Answers are cached for a minute per thread.
 *
 * Unless the operator allows it (`OB_SMTP_ALLOW_PRIVATE`), a host named `localhost` (or a subdomain of it), or one
 * with any address that is not public (loopback, private, link-local…, see public_address.ts), is left out: a
 * recipient domain is the tenant's to choose, and its DNS must not turn Outbox into a client of internal servers.
 * The address checked is the address connected to (the transport is given the IP), so no second look-up can differ.
 */
export interface MailHost { host: string, ip: string }

export class MxLookupError extends Error {
  constructor (readonly code: string, message: string, opts?: ErrorOptions) {
    super(message, opts)
    this.name = 'MxLookupError'
  }
}

const CACHE_MS = 60_000 // 1 min: short enough to follow MX changes, long enough to spare the resolver
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA'])

function isNotFound (err: unknown): boolean {
  return NOT_FOUND.has((err as { code?: string }).code ?? '')
}

export class MxResolver {
  private readonly resolver = new Resolver({ timeout: 5000, tries: 2 })
  private readonly cache = new Map<string, { at: number, hosts?: MailHost[], error?: MxLookupError }>()

  constructor (servers: readonly string[], private readonly allowPrivate: boolean) {
    if (servers.length > 0) this.resolver.setServers([...servers])
  }

  /**
   * The mail hosts of `domain` that have an address, most preferred first (at least one);
   * throws MxLookupError (`ENOMAILHOST`, `ENULLMX`, `ENONPUBLICMAILHOST` or `EDNS`).
   */
  async route (domain: string): Promise<MailHost[]> {
    const hit = this.cache.get(domain)
    if (hit !== undefined && Date.now() - hit.at < CACHE_MS) {
      if (hit.error !== undefined) throw hit.error
      return hit.hosts!
    }
    try {
      const hosts = await this.lookup(domain)
      this.cache.set(domain, { at: Date.now(), hosts })
      return hosts
    } catch (err) {
      // only definite answers are cached; a timed-out resolver is asked again next time
      if (err instanceof MxLookupError && err.code !== 'EDNS') this.cache.set(domain, { at: Date.now(), error: err })
      throw err
    }
  }

  private async lookup (domain: string): Promise<MailHost[]> {
    let names: string[]
    try {
      const mx = await this.resolver.resolveMx(domain)
      if (mx.length === 1 && (mx[0]!.exchange === '' || mx[0]!.exchange === '.')) {
        throw new MxLookupError(NULL_MX, `${domain} accepts no mail (null MX)`)
      }
      names = mx.sort((a, b) => a.priority - b.priority).map((r) => r.exchange)
    } catch (err) {
      if (err instanceof MxLookupError) throw err
      if (!isNotFound(err)) throw new MxLookupError('EDNS', `MX look-up for ${domain} failed: ${(err as Error).message}`, { cause: err })
      names = [domain]
    }
    const hosts: MailHost[] = []
    let lastError: unknown
    /** The first host left out for its address, for the bounce's reason when no host is left. */
    let refused: { host: string, address: string } | undefined
    for (const host of names) {
      if (!this.allowPrivate && isLocalhostName(host)) {
        refused ??= { host, address: 'loopback' }
        continue
      }
      try {
        const ips = await this.resolver.resolve4(host)
        // one non-public address refuses the host, as for webhook targets: a mixed answer is not one we can reason about
        const blocked = this.allowPrivate ? undefined : ips.find(isBlockedAddress)
        if (blocked !== undefined) refused ??= { host, address: blocked }
        else if (ips.length > 0) hosts.push({ host, ip: ips[0]! })
      } catch (err) {
        lastError = err
      }
    }
    if (hosts.length > 0) return hosts
    const lookupFailed = lastError !== undefined && !isNotFound(lastError)
    // a host that could not be looked up now may be a public one later: that waits (EDNS), a refusal does not
    if (refused !== undefined && !lookupFailed) {
      throw new MxLookupError(NON_PUBLIC_MAIL_HOST, `mail host ${refused.host} of ${domain} is at ${refused.address}, ` +
        'not a public address; delivery to loopback, private and link-local addresses is refused')
    }
    if (!lookupFailed) throw new MxLookupError(NO_MAIL_HOST, `${domain} has no mail host (no MX or A record)`)
    throw new MxLookupError('EDNS', `address look-up for the mail hosts of ${domain} failed: ${(lastError as Error).message}`, {
      cause: lastError
    })
  }
}
