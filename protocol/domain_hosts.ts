import type { FieldError } from './errors.ts'
import type { DomainRecord } from './records.ts'
import { VERP_SUBDOMAIN } from './verp.ts'

/**
 * A sending domain's own return-path and tracking hosts: names under the domain (`rp.example.com`,
 * `links.example.com`) that its owner points at the installation. Mail carries them only once the domain and the
 * host are verified (queued with the message, so delivery never reads the domain again); the gateway answers
 * tracking requests on a host only while it is a verified tracking host, and the inbound server accepts bounces at
 * a verified return-path host. Pure: no I/O.
 */
export const DOMAIN_HOST_KINDS = ['return_path', 'tracking'] as const
export type DomainHostKind = (typeof DOMAIN_HOST_KINDS)[number]

/** Lower-case labels of letters, digits and inner hyphens; at least three of them (a subdomain of a domain). */
export const DOMAIN_HOST_PATTERN = '^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.){2,}[a-z]([a-z0-9-]{0,61}[a-z0-9])?$'
const DOMAIN_HOST = new RegExp(DOMAIN_HOST_PATTERN)

/** The lower-case form of a host name as given (a final dot and surrounding spaces dropped). */
export function normalHost (raw: string): string {
  return raw.trim().replace(/\.$/, '').toLowerCase()
}

/**
 * Every problem of a host chosen for `domain`: it must be a host name strictly under the domain (a name outside it
 * would let one customer claim another's names), other than the default return path `bounces.<domain>` and other
 * than the domain's other chosen host (a CNAME cannot share its name with the return path's TXT and MX records).
 */
export function domainHostErrors (domainName: string, kind: DomainHostKind, host: string, other: string | undefined): FieldError[] {
  const field = `${kind}_host`
  if (!DOMAIN_HOST.test(host)) return [{ field, message: 'must be a host name such as links.example.com' }]
  if (!host.endsWith(`.${domainName}`)) return [{ field, message: `must be a subdomain of ${domainName}` }]
  const fallback = `${VERP_SUBDOMAIN}${domainName}`
  if (host === fallback) return [{ field, message: `must not be ${fallback}, the default return path` }]
  if (host === other) return [{ field, message: 'must differ from the domain\'s other host (return path and tracking)' }]
  return []
}

/** The domain's chosen host of `kind` when mail may use it: the domain and the host are verified. */
export function verifiedHost (domain: Pick<DomainRecord, 'status' | 'return_path' | 'tracking'>, kind: DomainHostKind): string | undefined {
  const chosen = domain[kind]
  return domain.status === 'verified' && chosen?.verified_at !== undefined ? chosen.host : undefined
}

/**
 * The verified domain whose verified host of `kind` is `host`, found through the names above it (a chosen host is
 * always under its domain): `owner` answers the verified domain of a name, as the control plane's index does.
 */
export function domainOfHost (
  owner: (name: string) => DomainRecord | undefined, host: string, kind: DomainHostKind
): DomainRecord | undefined {
  const labels = host.split('.')
  for (let i = 1; i < labels.length - 1; i++) {
    const domain = owner(labels.slice(i).join('.'))
    if (domain !== undefined && verifiedHost(domain, kind) === host) return domain
  }
  return undefined
}

/**
 * The base of the tracking links: the public URL, with its host name replaced by the domain's tracking host when
 * there is one (scheme, port and path kept: the operator's reverse proxy serves every tracking host as it serves
 * the public host).
 */
export function trackingBaseUrl (publicUrl: string, trackingHost: string | undefined): string {
  if (trackingHost === undefined) return publicUrl
  const url = new URL(publicUrl)
  url.hostname = trackingHost
  return url.toString().replace(/\/+$/, '')
}

/** The queued message's fields for the domain's verified hosts (none while a host is pending or the domain is unverified). */
export function queuedHosts (
  domain: Pick<DomainRecord, 'status' | 'return_path' | 'tracking'>
): { return_path_host?: string, tracking_host?: string } {
  const returnPath = verifiedHost(domain, 'return_path')
  const tracking = verifiedHost(domain, 'tracking')
  return {
    ...(returnPath !== undefined ? { return_path_host: returnPath } : {}),
    ...(tracking !== undefined ? { tracking_host: tracking } : {})
  }
}
