import type { Resolver } from 'node:dns/promises'
import type { LookupFunction } from 'node:net'
import { isBlockedAddress, isLocalhostName } from '../../protocol/mod.ts'

/**
 * A `lookup` for HTTPS requests to hosts named by recipients' DNS (MTA-STS policy servers, TLS-RPT `rua`
 * endpoints): resolved through `OB_DNS_SERVERS` (A, else AAAA), and, unless the operator allows it, refused on
 * `localhost` or any non-public address, as MX hosts are: a recipient domain must not make Outbox a client of
 * internal servers.
 */
export function safeLookup (resolver: Resolver, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    void (async () => {
      if (!allowPrivate && isLocalhostName(hostname)) throw new Error(`${hostname} is localhost`)
      let ips: string[] = []
      let family = 4
      try { ips = await resolver.resolve4(hostname) } catch { /* AAAA next */ }
      if (ips.length === 0) { ips = await resolver.resolve6(hostname); family = 6 }
      if (ips.length === 0) throw Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' })
      if (!allowPrivate && ips.some(isBlockedAddress)) throw new Error(`${hostname} is on a non-public address`)
      return { address: ips[0]!, family }
    })().then((a) => {
      if ((options as { all?: boolean }).all === true) {
        (callback as unknown as (e: null, a: Array<{ address: string, family: number }>) => void)(null, [a])
      } else callback(null, a.address, a.family)
    }, (err: Error) => { callback(err as NodeJS.ErrnoException, '', 0) })
  }
}
