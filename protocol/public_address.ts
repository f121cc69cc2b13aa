import { isIP } from 'node:net'

/**
 * Which addresses are never a public destination: loopback, private, link-local, carrier-grade NAT, multicast,
 * reserved and unspecified ranges, in IPv4 and IPv6 (IPv4-mapped, IPv4-compatible, NAT64 and 6to4 forms are judged by
 * the IPv4 address they carry). Every outbound connection a tenant can aim (webhook targets, the MX hosts of
 * recipient domains) is checked against it unless the operator allows such addresses.
 */

/** IPv4 ranges that are never a public endpoint: [network, prefix length]. */
const V4_BLOCKED: Array<[number, number]> = [
  [0x00000000, 8], // 0.0.0.0/8 "this network", incl. unspecified
  [0x0a000000, 8], // 10/8
  [0x64400000, 10], // 100.64/10 carrier-grade NAT
  [0x7f000000, 8], // 127/8 loopback
  [0xa9fe0000, 16], // 169.254/16 link-local (cloud metadata)
  [0xac100000, 12], // 172.16/12
  [0xc0000000, 24], // 192.0.0/24 IETF protocol assignments
  [0xc0000200, 24], // 192.0.2/24 documentation (TEST-NET-1)
  [0xc0a80000, 16], // 192.168/16
  [0xc6120000, 15], // 198.18/15 benchmarking
  [0xc6336400, 24], // 198.51.100/24 documentation (TEST-NET-2)
  [0xcb007100, 24], // 203.0.113/24 documentation (TEST-NET-3)
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
  // 6to4 2002::/16 carries its relay's IPv4 address in groups 1–2: 2002:7f00:1:: reaches 127.0.0.1 through a relay
  if (g[0] === 0x2002) return v4Blocked(`${g[1]! >> 8}.${g[1]! & 255}.${g[2]! >> 8}.${g[2]! & 255}`)
  if (g[0] === 0x100 && zeros(1, 4)) return true // 100::/64 discard-only
  if ((g[0]! & 0xffc0) === 0xfe80) return true // fe80::/10 link-local
  if ((g[0]! & 0xffc0) === 0xfec0) return true // fec0::/10 site-local (deprecated)
  if ((g[0]! & 0xfe00) === 0xfc00) return true // fc00::/7 unique-local
  if ((g[0]! & 0xff00) === 0xff00) return true // ff00::/8 multicast
  if (g[0] === 0x2001 && g[1] === 0xdb8) return true // documentation
  return false
}

/** True when the address (an IPv4 or IPv6 literal) is loopback, private, link-local, multicast, unspecified or otherwise non-public. */
export function isBlockedAddress (ip: string): boolean {
  const family = isIP(ip)
  if (family === 4) return v4Blocked(ip)
  if (family === 6) return v6Blocked(ip)
  return true
}

/**
 * `localhost` and its subdomains (RFC 6761 §6.3): loopback whatever a DNS server says, so they are refused by
 * name, before any look-up. A trailing dot and letter case do not matter.
 */
export function isLocalhostName (host: string): boolean {
  const name = host.replace(/\.$/, '').toLowerCase()
  return name === 'localhost' || name.endsWith('.localhost')
}
