import type { ControlPlane } from '../stores/control_plane/mod.ts'
import type { DomainRecord, RouteRecord } from '../protocol/mod.ts'
import { decodeVerp, dmarcAddressDomain, domainOfHost, type VerpAddress } from '../protocol/mod.ts'

/** What a RCPT TO address is to us. */
export type Recipient =
  | { kind: 'route', routes: RouteRecord[] }
  | { kind: 'verp', verp: VerpAddress, orgId: string }
  /** The DMARC report address of a verified domain (`dmarc@bounces.<domain>`, inbound/dmarc_intake.ts). */
  | { kind: 'dmarc', domain: DomainRecord }
  | { kind: 'reject', reason: 'unknown_mailbox' | 'relay' | 'syntax' }

/**
 * Accepts an address only when a route matches it (exact `addr@domain` first, else `*@domain`) or it is a VERP
 * bounce address of a domain verified here (at `bounces.<domain>` or at the domain's verified return-path host), or
 * its DMARC report address. Everything else is refused, so the server is never an open relay.
 * A VERP address is accepted on its shape; its tag is checked against the message when the mail is processed
 * (report_checks.ts), where a forged one is dropped and counted.
 */
export function resolveRecipient (cp: ControlPlane, address: string): Recipient {
  const addr = address.trim().toLowerCase()
  const at = addr.lastIndexOf('@')
  // `%`, `!` and `@` in the local part are the old relay hacks (user%other@us, host!user@us, "a@b"@us).
  if (at <= 0 || at === addr.length - 1 || /[%!@"\\]/.test(addr.slice(0, at))) return { kind: 'reject', reason: 'syntax' }
  const domain = addr.slice(at + 1)
  const verp = decodeVerp(addr)
  if (verp !== undefined) {
    // Only a verified domain sends, so bounces belong to the organisation whose claim verified the name: the one of
    // `bounces.<domain>`, or the domain whose verified return-path host this is.
    const owner = verp.domain !== undefined
      ? cp.domainOwner(verp.domain)
      : domainOfHost((name) => cp.domainOwner(name), verp.host, 'return_path')
    if (owner !== undefined) return { kind: 'verp', verp, orgId: owner.org_id }
  }
  const reported = dmarcAddressDomain(addr)
  if (reported !== undefined) {
    const owner = cp.domainOwner(reported)
    if (owner !== undefined) return { kind: 'dmarc', domain: owner }
  }
  const routes = matchRoutes(cp, addr, domain)
  if (routes.length > 0) return { kind: 'route', routes }
  return { kind: 'reject', reason: cp.domainOwner(domain) !== undefined ? 'unknown_mailbox' : 'relay' }
}

/**
 * Exact-address routes win over catch-all routes of the same domain. A route matches only while its domain is
 * verified by the route's organisation: a route left from before that rule, one created while the domain was
 * still a pending claim, or one whose domain was deleted and verified by someone else, receives nothing.
 */
export function matchRoutes (cp: ControlPlane, address: string, domain: string): RouteRecord[] {
  const owner = cp.domainOwner(domain)
  if (owner === undefined) return []
  const exact: RouteRecord[] = []
  const wildcard: RouteRecord[] = []
  const star = `*@${domain}`
  for (const r of cp.routes.list(`${owner.org_id}.`)) {
    const m = r.match.toLowerCase()
    if (m === address) exact.push(r)
    else if (m === star) wildcard.push(r)
  }
  return exact.length > 0 ? exact : wildcard
}
