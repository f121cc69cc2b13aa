import { lookup as dnsLookup, Resolver } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'
import { isBlockedAddress, isLocalhostName, type InternalErrorCode } from '../protocol/mod.ts'

/**
 * The SSRF guard for webhook targets. A host is resolved once per new connection, every address is checked,
 * and the socket connects to exactly the address that was checked (it is what the lookup hands back to the
 * TLS connector), so a DNS answer that changes between check and connect cannot redirect the request.
 */
export class SsrfBlockedError extends Error {
  readonly code = 'ssrf_blocked' satisfies InternalErrorCode
  constructor (readonly host: string, readonly address: string) {
    super(`webhook target ${host} resolves to ${address}, a private, loopback, link-local or multicast address`)
    this.name = 'SsrfBlockedError'
  }
}

interface Resolved { address: string, family: 4 | 6 }

/** Resolves with the configured DNS servers when set (tests point these at a local server), else the system's. */
export function makeResolve (dnsServers: readonly string[]): (host: string) => Promise<Resolved[]> {
  if (dnsServers.length === 0) {
    return async (host) => await new Promise((resolve, reject) => {
      dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => {
        if (err !== null) reject(err)
        else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })))
      })
    })
  }
  const resolver = new Resolver({ timeout: 3000, tries: 2 })
  resolver.setServers([...dnsServers])
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([
      new Promise<string[]>((resolve, reject) => resolver.resolve4(host, (err, a) => { if (err !== null) reject(err); else resolve(a) })),
      new Promise<string[]>((resolve, reject) => resolver.resolve6(host, (err, a) => { if (err !== null) reject(err); else resolve(a) }))
    ])
    const out: Resolved[] = []
    if (v4.status === 'fulfilled') for (const a of v4.value) out.push({ address: a, family: 4 })
    if (v6.status === 'fulfilled') for (const a of v6.value) out.push({ address: a, family: 6 })
    // eslint-disable-next-line no-throw-literal -- rethrows the resolver's own error
    if (out.length === 0) throw (v4.status === 'rejected' ? v4.reason : new Error(`no address for ${host}`)) as Error
    return out
  }
}

/**
 * Resolves `host` and checks every address. One refused address refuses the host: a name that mixes public
 * and private answers is not a target we can reason about.
 */
export async function checkedAddress (
  host: string, resolve: (host: string) => Promise<Resolved[]>, allowPrivate: boolean
): Promise<Resolved> {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host
  const literal = isIP(bare)
  // RFC 6761: `localhost` and its subdomains are loopback whatever a DNS server says, so they are refused by name;
  // a resolver that does not know them (NXDOMAIN) must not turn a refusal into a retryable DNS error.
  if (!allowPrivate && literal === 0 && isLocalhostName(bare)) throw new SsrfBlockedError(bare, 'loopback')
  const addresses = literal !== 0 ? [{ address: bare, family: literal as 4 | 6 }] : await resolve(bare)
  if (!allowPrivate) {
    for (const a of addresses) if (isBlockedAddress(a.address)) throw new SsrfBlockedError(bare, a.address)
  }
  return addresses[0]!
}

/** A `lookup` for net/tls.connect that hands back only an address that passed the guard. */
export function guardedLookup (resolve: (host: string) => Promise<Resolved[]>, allowPrivate: boolean): LookupFunction {
  return ((hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    checkedAddress(hostname, resolve, allowPrivate).then(
      (a) => { if (options?.all === true) callback(null, [a]); else callback(null, a.address, a.family) },
      (err: Error) => callback(err)
    )
  }) as unknown as LookupFunction
}
