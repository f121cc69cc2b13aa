import { BlockList, isIP } from 'node:net'
import type { CidrRange } from '../../config/mod.ts'

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i
/** Hops of `X-Forwarded-For` looked at, from the right; a chain of proxies longer than this is not a real set-up. */
const MAX_HOPS = 16

/** `::ffff:10.0.0.1` and `10.0.0.1` are one client: IPv4 peers of a dual-stack socket arrive in the first form. */
function normalise (address: string): string {
  const m = MAPPED_V4.exec(address)
  return m === null ? address : m[1]!
}

/**
 * The client address a request is counted under. The socket's peer address, unless the peer is a trusted proxy:
 * then `X-Forwarded-For` is read from the right (each proxy appends the address it received from), skipping
 * trusted proxies, and the first address that is not one is the client. Anything a client wrote to the left of
 * that is never read, so a client cannot choose the address it is counted under. An entry that is not an IP
 * address stops the walk at the proxy that wrote it.
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
    let client = normalise(peer)
    if (this.trusted === undefined || forwardedFor === '' || !this.isTrusted(client)) return client
    const hops = forwardedFor.split(',')
    for (let i = hops.length - 1; i >= Math.max(0, hops.length - MAX_HOPS); i--) {
      const hop = normalise(hops[i]!.trim())
      if (isIP(hop) === 0) return client
      client = hop
      if (!this.isTrusted(hop)) return client
    }
    return client
  }

  private isTrusted (address: string): boolean {
    const version = isIP(address)
    return version !== 0 && this.trusted!.check(address, version === 4 ? 'ipv4' : 'ipv6')
  }
}
