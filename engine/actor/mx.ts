import { Resolver } from 'node:dns/promises'
import { isBlockedAddress, isLocalhostName } from '../../protocol/mod.ts'
import { NO_HOST_FOR_FAMILY, NO_MAIL_HOST, NON_PUBLIC_MAIL_HOST, NULL_MX } from './classify.ts'

/**
 * Where mail for a domain goes: its MX hosts in preference order (RFC 5321 §5.1), or the domain itself when it
 * has no MX (implicit MX). Each host is resolved to an address with the same resolver, so a test (or an operator)
 * that sets `OB_DNS_SERVERS` controls the whole path. Answers are cached for a minute per thread and address family.
 *
 * The family is the sending source's:
 * - none (the host's own address, nothing bound): a host's A record, else its AAAA record, so an IPv6-only
 *   mail host is delivered to over IPv6 instead of bounced;
 * - 4 or 6 (a source bound to an IPv4 or IPv6 address, which can reach only its own family): only A, or only AAAA,
 *   records; a host without one is left out. When no host is left for the family but some host has an address of
 *   the other one, the look-up throws `ENOHOSTFORFAMILY`: nothing is wrong with the domain, the caller sends from a
 *   source of the other family (or the host's address) instead. Should it reach classification, it is deferred,
 *   never a bounce.
 *
 * Unless the operator allows it (`OB_SMTP_ALLOW_PRIVATE`), a host named `localhost` (or a subdomain of it), or one
 * with any address that is not public (loopback, private, link-local…, in IPv4 and IPv6, see public_address.ts), is
 * left out: a recipient domain is the tenant's to choose, and its DNS must not turn Outbox into a client of internal
 * servers. The address checked is the address connected to (the transport is given the IP), so no second look-up
 * can differ.
 */
export interface MailHost { host: string, ip: string, family: 4 | 6 }

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

/** The addresses of one host in one family; none when it has no record of the family. */
interface HostAddresses { ips: string[], family: 4 | 6 }

export class MxResolver {
  private readonly resolver = new Resolver({ timeout: 5000, tries: 2 })
  private readonly cache = new Map<string, { at: number, hosts?: MailHost[], error?: MxLookupError }>()
  /** Look-ups under way, by key: concurrent callers share one. */
  private readonly asking = new Map<string, Promise<MailHost[]>>()

  constructor (servers: readonly string[], private readonly allowPrivate: boolean) {
    if (servers.length > 0) this.resolver.setServers([...servers])
  }

  /**
   * The mail hosts of `domain` that have an address a source of `family` can reach (unset: the host's own address,
   * A preferred, AAAA when a host has no A), most preferred first (at least one); throws MxLookupError
   * (`ENOMAILHOST`, `ENULLMX`, `ENONPUBLICMAILHOST`, `ENOHOSTFORFAMILY` or `EDNS`).
   */
  async route (domain: string, family?: 4 | 6): Promise<MailHost[]> {
    const key = `${family ?? 'host'}|${domain}`
    const hit = this.cache.get(key)
    if (hit !== undefined && Date.now() - hit.at < CACHE_MS) {
      if (hit.error !== undefined) throw hit.error
      return hit.hosts!
    }
    // A burst to one new domain asks the resolver once: the others wait for the same answer.
    let asked = this.asking.get(key)
    if (asked === undefined) {
      asked = this.ask(key, domain, family).finally(() => this.asking.delete(key))
      this.asking.set(key, asked)
    }
    return await asked
  }

  private async ask (key: string, domain: string, family: 4 | 6 | undefined): Promise<MailHost[]> {
    try {
      const hosts = await this.lookup(domain, family)
      this.cache.set(key, { at: Date.now(), hosts })
      return hosts
    } catch (err) {
      // only definite answers are cached; a timed-out resolver is asked again next time
      if (err instanceof MxLookupError && err.code !== 'EDNS') this.cache.set(key, { at: Date.now(), error: err })
      throw err
    }
  }

  private async lookup (domain: string, family: 4 | 6 | undefined): Promise<MailHost[]> {
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
    /** Hosts with no address of a bound source's family: one of the other family turns the answer into ENOHOSTFORFAMILY. */
    const otherFamily: string[] = []
    for (const host of names) {
      if (!this.allowPrivate && isLocalhostName(host)) {
        refused ??= { host, address: 'loopback' }
        continue
      }
      try {
        const found = await this.addresses(host, family)
        // one non-public address refuses the host, as for webhook targets: a mixed answer is not one we can reason about
        const blocked = this.allowPrivate ? undefined : found.ips.find(isBlockedAddress)
        if (blocked !== undefined) refused ??= { host, address: blocked }
        else if (found.ips.length > 0) hosts.push({ host, ip: found.ips[0]!, family: found.family })
        else if (family !== undefined) otherFamily.push(host)
      } catch (err) {
        if (family !== undefined && isNotFound(err)) otherFamily.push(host)
        lastError = err
      }
    }
    if (hosts.length > 0) return hosts
    if (family !== undefined) {
      const other = await this.firstOfOtherFamily(otherFamily, family)
      if (other !== undefined) {
        throw new MxLookupError(NO_HOST_FOR_FAMILY, `no mail host of ${domain} has an IPv${family} address ` +
          `(${other} has IPv${family === 4 ? 6 : 4} only); send from a source of the other family`)
      }
    }
    const lookupFailed = lastError !== undefined && !isNotFound(lastError)
    // a host that could not be looked up now may be a public one later: that waits (EDNS), a refusal does not
    if (refused !== undefined && !lookupFailed) {
      throw new MxLookupError(NON_PUBLIC_MAIL_HOST, `mail host ${refused.host} of ${domain} is at ${refused.address}, ` +
        'not a public address; delivery to loopback, private and link-local addresses is refused')
    }
    if (!lookupFailed) throw new MxLookupError(NO_MAIL_HOST, `${domain} has no mail host (no MX, A or AAAA record)`)
    throw new MxLookupError('EDNS', `address look-up for the mail hosts of ${domain} failed: ${(lastError as Error).message}`, {
      cause: lastError
    })
  }

  /** A host's A records (`family` 4), AAAA records (6), or, for the host's own address, A and when there is none AAAA. */
  private async addresses (host: string, family: 4 | 6 | undefined): Promise<HostAddresses> {
    if (family === 6) return { ips: await this.resolver.resolve6(host), family: 6 }
    if (family === 4) return { ips: await this.resolver.resolve4(host), family: 4 }
    try {
      const ips = await this.resolver.resolve4(host)
      if (ips.length > 0) return { ips, family: 4 }
    } catch (err) {
      if (!isNotFound(err)) throw err
    }
    return { ips: await this.resolver.resolve6(host), family: 6 }
  }

  /** The first of `hosts` with an address of the family other than `family`, if any (failed look-ups count as none). */
  private async firstOfOtherFamily (hosts: string[], family: 4 | 6): Promise<string | undefined> {
    for (const host of hosts) {
      try {
        if ((await this.addresses(host, family === 4 ? 6 : 4)).ips.length > 0) return host
      } catch { /* none of the other family either */ }
    }
    return undefined
  }
}
