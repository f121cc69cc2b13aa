import { BlockList, isIP } from 'node:net'
import type { CidrRange } from '../../config/mod.ts'

/** Hops of `X-Forwarded-For` looked at, from the right; a chain of proxies longer than this is not a real set-up. */
const MAX_HOPS = 16

/** The 8 groups of an IPv6 address (`isIP` already said it is one), with an IPv4 tail (`::ffff:1.2.3.4`) folded in. */
function hextets (v6: string): number[] {
  let s = v6
  const last = s.lastIndexOf(':')
  if (s.includes('.', last)) {
    const p = s.slice(last + 1).split('.').map(Number)
    s = `${s.slice(0, last + 1)}${((p[0]! << 8) | p[1]!).toString(16)}:${((p[2]! << 8) | p[3]!).toString(16)}`
  }
  const [head, tail] = s.split('::') as [string, string | undefined]
  const h = head === '' ? [] : head.split(':')
  const t = tail === undefined || tail === '' ? [] : tail.split(':')
  const zeros = tail === undefined ? [] : new Array<string>(8 - h.length - t.length).fill('0')
  return [...h, ...zeros, ...t].map((x) => parseInt(x, 16))
}

/**
 * An address as one client: IPv4 in dotted form, also when it arrives IPv4-mapped (a dual-stack listener reports
 * `0000:…:ffff:7f00:0001` for 127.0.0.1); an IPv6 address as its /64, since one host is routinely handed a whole
 * /64 and could otherwise be counted as 2^64 clients. `undefined` when `raw` is not an IP address.
 */
export function clientIdentity (raw: string): string | undefined {
  const address = raw.replace(/%.*$/, '') // an IPv6 zone (`fe80::1%eth0`) names an interface, not a client
  const version = isIP(address)
  if (version === 4) return address
  if (version === 0) return undefined
  const g = hextets(address)
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`
}

/**
 * The client a request is counted under. The socket's peer, unless the peer is a trusted proxy: then
 * `X-Forwarded-For` is read from the right (each proxy appends the address it received from), skipping trusted
 * proxies, and the first address that is not one is the client. What a client wrote to the left of that is never
 * read, so a client cannot choose what it is counted under. An entry that is not an IP address stops the walk at
 * the proxy that wrote it. The result is a `clientIdentity`.
 */
export class ClientAddresses {
  private readonly trusted: BlockList | undefined

  constructor (ranges: readonly CidrRange[]) {
    if (ranges.length === 0) return
    this.trusted = new BlockList()
    for (const r of ranges) this.trusted.addSubnet(r.address, r.prefix, r.family)
  }

  /** True when `X-Forwarded-For` can matter; when false the caller need not read the header at all. */
  get readsForwardedFor (): boolean {
    return this.trusted !== undefined
  }

  /** `peer`: the socket's address as text; `forwardedFor`: the header's value, '' when absent. */
  of (peer: string, forwardedFor: string): string {
    return clientIdentity(this.client(peer, forwardedFor)) ?? peer
  }

  private client (peer: string, forwardedFor: string): string {
    if (this.trusted === undefined || forwardedFor === '' || !this.isTrusted(peer)) return peer
    let client = peer
    const hops = forwardedFor.split(',')
    for (let i = hops.length - 1; i >= Math.max(0, hops.length - MAX_HOPS); i--) {
      const hop = hops[i]!.trim()
      if (isIP(hop) === 0) return client
      client = hop
      if (!this.isTrusted(hop)) return client
    }
    return client
  }

  /** BlockList matches IPv4 ranges against IPv4-mapped IPv6 addresses too. */
  private isTrusted (address: string): boolean {
    const version = isIP(address)
    return version !== 0 && this.trusted!.check(address, version === 4 ? 'ipv4' : 'ipv6')
  }
}
