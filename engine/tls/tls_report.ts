import { randomUUID } from 'node:crypto'
import type { TlsDayCounts, TlsFailureDetail } from '../../stores/tls_reports/mod.ts'

/**
 * TLS-RPT (RFC 8460) as data: a domain's `_smtp._tls` TXT record and the aggregate report of one UTC day, in the
 * RFC's JSON shape (§4.4). Pure functions over what the counters hold.
 */

/** The `rua` URIs of a domain's `_smtp._tls` TXT records (RFC 8460 §3): none unless exactly one is `v=TLSRPTv1`. */
export function parseTlsRptRecord (records: readonly string[]): string[] {
  const rpt = records.filter((r) => /^v=TLSRPTv1\s*(;|$)/.test(r))
  if (rpt.length !== 1) return []
  for (const part of rpt[0]!.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0 || part.slice(0, eq).trim() !== 'rua') continue
    return part.slice(eq + 1).split(',').map((u) => u.trim()).filter((u) => /^(mailto:|https:\/\/)/i.test(u)).slice(0, 10)
  }
  return []
}

export interface TlsReport {
  'organization-name': string
  'date-range': { 'start-datetime': string, 'end-datetime': string }
  'contact-info': string
  'report-id': string
  policies: Array<{
    policy: { 'policy-type': 'sts' | 'no-policy-found', 'policy-string'?: string[], 'policy-domain': string, 'mx-host'?: string[] }
    summary: { 'total-successful-session-count': number, 'total-failure-session-count': number }
    'failure-details'?: Array<TlsFailureDetail & { 'failed-session-count': number }>
  }>
}

/** The report of `day` (`YYYY-MM-DD`, UTC) for one policy domain. */
export function buildTlsReport (day: string, domain: string, counts: TlsDayCounts, who: { organization: string, contact: string },
  reportId: string = randomUUID()): TlsReport {
  const failures = counts.failures.reduce((n, f) => n + f.count, 0)
  // a policy that could not be fetched has no policy text: reported as what was found, nothing
  const fetched = counts.policy.strings.length > 0
  return {
    'organization-name': who.organization,
    'date-range': { 'start-datetime': `${day}T00:00:00Z`, 'end-datetime': `${day}T23:59:59Z` },
    'contact-info': who.contact,
    'report-id': `${day}.${reportId}@${who.organization}`,
    policies: [{
      policy: {
        'policy-type': 'sts',
        ...(fetched ? { 'policy-string': counts.policy.strings } : {}),
        'policy-domain': domain,
        ...(counts.policy.mx.length > 0 ? { 'mx-host': counts.policy.mx } : {})
      },
      summary: { 'total-successful-session-count': counts.ok, 'total-failure-session-count': failures },
      ...(counts.failures.length > 0
        ? { 'failure-details': counts.failures.map((f) => ({ ...f.detail, 'failed-session-count': f.count })) }
        : {})
    }]
  }
}
