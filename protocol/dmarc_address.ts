import { VERP_SUBDOMAIN } from './verp.ts'

/**
 * Where receivers send a domain's DMARC aggregate reports (RFC 7489 §7.2): `dmarc@bounces.<domain>`, the
 * return-path domain, whose MX already points at this installation's inbound server. It shares the sending
 * domain's organisational domain, so receivers send to it without the external-destination check of §7.1 (a
 * `_report._dmarc` record the customer could not publish in the installation's own zone). The address names the
 * domain, and through it the organisation every report it receives is filed under.
 */
export const DMARC_LOCAL_PART = 'dmarc'

/** The `rua` address of a sending domain. */
export function dmarcReportAddress (domain: string): string {
  return `${DMARC_LOCAL_PART}@${VERP_SUBDOMAIN}${domain.toLowerCase()}`
}

/** The DMARC record a sending domain is asked to publish: monitoring only, reports to this installation. */
export function dmarcRecordValue (domain: string): string {
  return `v=DMARC1; p=none; rua=mailto:${dmarcReportAddress(domain)}`
}

/** The sending domain a `dmarc@bounces.<domain>` address is for, or undefined for any other address. */
export function dmarcAddressDomain (address: string): string | undefined {
  const bare = address.trim().replace(/^<(.*)>$/, '$1').toLowerCase()
  const at = bare.lastIndexOf('@')
  if (bare.slice(0, at) !== DMARC_LOCAL_PART) return undefined
  const host = bare.slice(at + 1)
  return host.startsWith(VERP_SUBDOMAIN) && host.length > VERP_SUBDOMAIN.length ? host.slice(VERP_SUBDOMAIN.length) : undefined
}
