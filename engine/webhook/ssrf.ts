import { lookup as dnsLookup, Resolver } from 'node:dns'
import { isIP, type LookupFunction } from 'node:net'

/**
 * The SSRF guard for webhook targets. A host is resolved once per new connection, every address is checked,
 * and the socket connects to exactly the address that was checked (it is what the lookup hands back to the
 * TLS connector), so a DNS answer that changes between check and connect cannot redirect the request.
 */
export class SsrfBlockedError extends Error {
  readonly code = 'ssrf_blocked'
  constructor (readonly host: string, readonly address: string) {
    super(`webhook target ${host} resolves to ${address}, a private, loopback, link-local or multicast address`)
    this.name = 'SsrfBlockedError'
  }
}

/** IPv4 ranges that are never a public endpoint: [network, prefix length]. */
const V4_BLOCKED: Array<[number, number]> = [
  [0x00000000, 8], // 0.0.0.0/8 "this network", incl. unspecified
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10 carrier-grade NAT
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local (cloud metadata)
  [0xac100000, 12], // 172.16/12
  [0xc0000000, 24], // 192.0.0/24 IETF protocol assignments
  [0xc0a80000, 16], // 192.168/16
  [0xc6120000, 15], // 198.18/15 benchmarking
  [0xe0000000, 4], // 224/4 multicast
  [0xf0000000, 4] // 240/4 reserved, incl. broadcast
]

function v4ToInt (ip: string): number {
  const p = ip.split('.').map(Number)
  return ((p[0]! << 24) | (p[1]! << 16) | (p[2]! << 8) | p[3]!) >>> 0
}

function v4Blocked (ip: string): boolean {
  const n = v4ToInt(ip)
  for (const [net, len] of V4_BLOCKED) {
    const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0
    if (((n & mask) >>> 0) === net) return true
  }
  return false
}

/** Eight 16-bit groups of an IPv6 address (with an embedded dotted quad, if any, converted). */
function v6Groups (ip: string): number[] {
  let s = ip.toLowerCase()
  const zone = s.indexOf('%')
  if (zone >= 0) s = s.slice(0, zone)
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(s)
  if (quad !== null) {
    const n = v4ToInt(quad[1]!)
    s = s.slice(0, quad.index) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`
  }
  const [head, tail] = s.includes('::') ? s.split('::') as [string, string] : [s, undefined]
  const h = head === '' ? [] : head.split(':')
  const t = tail === undefined || tail === '' ? [] : tail.split(':')
  const fill = tail === undefined ? [] : new Array(8 - h.length - t.length).fill('0')
  return [...h, ...fill, ...t].map((g) => parseInt(g, 16))
}

function v6Blocked (ip: string): boolean {
  const g = v6Groups(ip)
  if (g.length !== 8 || g.some((x) => Number.isNaN(x))) return true
  const embeddedV4 = (): string => `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`
  const zeros = (from: number, to: number): boolean => g.slice(from, to).every((x) => x === 0)
  if (zeros(0, 8)) return true // :: unspecified
  if (zeros(0, 7) && g[7] === 1) return true // ::1 loopback
  if (zeros(0, 5) && g[5] === 0xffff) return v4Blocked(embeddedV4()) // ::ffff:a.b.c.d IPv4-mapped
  if (zeros(0, 6)) return true // ::a.b.c.d IPv4-compatible (deprecated): never a real endpoint
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4Blocked(embeddedV4()) // NAT64 64:ff9b::/96
  if ((g[0]! & 0xffc0) === 0xfe80) return true // fe80::/10 link-local
  if ((g[0]! & 0xffc0) === 0xfec0) return true // fec0::/10 site-local (deprecated)
  if ((g[0]! & 0xfe00) === 0xfc00) return true // fc00::/7 unique-local
  if ((g[0]! & 0xff00) === 0xff00) return true // ff00::/8 multicast
  if (g[0] === 0x2001 && g[1] === 0xdb8) return true // documentation
  return false
}

/** True when the address is loopback, private, link-local, multicast, unspecified or otherwise non-public. */
export function isBlockedAddress (ip: string): boolean {
  const family = isIP(ip)
  if (family === 4) return v4Blocked(ip)
  if (family === 6) return v6Blocked(ip)
  return true
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
export async function checkedAddress (host: string, resolve: (host: string) => Promise<Resolved[]>, allowPrivate: boolean): Promise<Resolved> {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host
  const literal = isIP(bare)
  // RFC 6761: `localhost` and its subdomains are loopback whatever a DNS server says, so they are refused by name;
  // a resolver that does not know them (NXDOMAIN) must not turn a refusal into a retryable DNS error.
  const name = bare.replace(/\.$/, '').toLowerCase()
  if (!allowPrivate && literal === 0 && (name === 'localhost' || name.endsWith('.localhost'))) throw new SsrfBlockedError(bare, 'loopback')
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
