import { isIP } from 'node:net'
import type { Config } from '../../config/mod.ts'
import { defaultReturnPathHost, dmarcRecordValue, newId, type DomainRecord } from '../../protocol/mod.ts'
import type { SpfPolicy } from './spf.ts'
import { dkimRecordName, ed25519Key, ed25519Selector, extraDkimRecords, rsaKey, type DnsRecordListed } from './dkim_keys.ts'

/** Host part of the public URL: what a tracking host's CNAME names. */
function publicHost (config: Config): string {
  return new URL(config.http.publicUrl).hostname
}

/** The return-path (VERP) domain: the envelope sender of every message, so the name receivers check SPF for. */
export function returnPathDomain (name: string): string {
  return defaultReturnPathHost(name)
}

/** Shown on the return-path MX record when no host name is known for it. */
export const MX_HOST_WARNING = 'No MX host name is configured: OB_PUBLIC_URL names an address and an MX record must name a host. ' +
  'Set OB_MX_HOST to the host name that receives bounces on port 25 and restart; this record is then filled in.'

/** Shown on a tracking host's CNAME when the public URL names an address, which a CNAME cannot point at. */
export const CNAME_HOST_WARNING = 'OB_PUBLIC_URL names an address and a CNAME record must name a host: the operator sets ' +
  'OB_PUBLIC_URL to a host name and restarts; this record is then filled in.'

/** Shown on an SPF record of a verified domain whose value changed since it was found (OB_SPF or the egress sources). */
export const SPF_CHANGED_WARNING = 'The addresses this installation sends from changed since this record was found: publish this ' +
  'value in place of the old one, then verify. The domain stays verified; until then SPF fails for mail from the new addresses.'

/** The return-path MX value: priority 10 and the configured host name, or '' when there is none. */
function mxValue (config: Config): string {
  return config.http.mxHost === undefined ? '' : `10 ${config.http.mxHost}`
}

/** A tracking host's CNAME value: the public URL's host name, or '' when it names an address. */
function cnameValue (config: Config): string {
  const host = publicHost(config)
  return isIP(host.replace(/^\[(.*)\]$/, '$1')) === 0 ? host : ''
}

/** A record as the API shows it: the last check's result, and a warning when the record cannot be published as is. */
export type ShownRecord = DnsRecordListed & { verified: boolean, warning?: string }

/**
 * The DNS records a domain owner publishes: SPF for the domain, DKIM, SPF and MX for the return-path domain, and
 * DMARC, whose `rua` is the domain's report address here (protocol/dmarc_address.ts). SPF is checked on the
 * envelope sender (`bounces.<domain>`), so its record there is what makes SPF pass; it aligns with the From domain
 * under DMARC's relaxed rule (same organisational domain).
 */
export function dnsRecords (config: Config, name: string, selector: string, publicKeyB64: string, spf: string): DomainRecord['records'] {
  return [
    { type: 'TXT', name, value: spf },
    { type: 'TXT', name: `${selector}._domainkey.${name}`, value: `v=DKIM1; k=rsa; p=${publicKeyB64}` },
    { type: 'TXT', name: returnPathDomain(name), value: spf },
    { type: 'MX', name: returnPathDomain(name), value: mxValue(config) },
    { type: 'TXT', name: `_dmarc.${name}`, value: dmarcRecordValue(name) }
  ]
}

/** The records of the domain's own hosts: SPF and MX at its return-path host, a CNAME at its tracking host. */
function hostRecords (config: Config, domain: DomainRecord, spf: string): DnsRecordListed[] {
  const out: DnsRecordListed[] = []
  if (domain.return_path !== undefined) {
    const host = domain.return_path.host
    out.push({ type: 'TXT', name: host, value: spf }, { type: 'MX', name: host, value: mxValue(config) })
  }
  if (domain.tracking !== undefined) out.push({ type: 'CNAME', name: domain.tracking.host, value: cnameValue(config) })
  return out
}

const isSpf = (r: { type: string, value: string }): boolean => r.type === 'TXT' && r.value.startsWith('v=spf1')

/**
 * The records a domain is asked to publish, each with the result of the last check. A domain added before the
 * return-path SPF record was part of the set is stored without it; it gets one just before the return-path MX. The
 * other DKIM records (ed25519, a rotation's pair, replaced keys still listed) follow the signing RSA key's; the
 * records of the domain's own return-path and tracking hosts come last. Values that follow the installation's
 * settings are always today's: the SPF records (OB_SPF and the egress sources, spf.ts), the MX records
 * (`OB_MX_HOST`) and the CNAME (OB_PUBLIC_URL). A record whose value changed since the last check counts as not
 * verified; an SPF record of a verified domain found before with another value says so in a warning.
 */
export function requestedRecords (config: Config, domain: DomainRecord, spf: SpfPolicy, nowMs = Date.now()): ShownRecord[] {
  const returnPath = returnPathDomain(domain.name)
  const rsaName = dkimRecordName(domain.name, domain.dkim_selector)
  const baseNames = new Set([domain.name, returnPath, `_dmarc.${domain.name}`, rsaName])
  // the stored set holds the signing RSA key's record and, after a check, the hosts' records (listed from the
  // domain's hosts below, so a changed host shows its own); every other DKIM record is listed from the key state
  const records: DnsRecordListed[] = domain.records.filter((r) => baseNames.has(r.name))
  if (records.some((r) => isSpf(r) && r.name === domain.name) && !records.some((r) => r.type === 'TXT' && r.name === returnPath)) {
    const mx = records.findIndex((r) => r.type === 'MX' && r.name === returnPath)
    records.splice(mx < 0 ? records.length : mx, 0, { type: 'TXT', name: returnPath, value: spf.value })
  }
  const rsa = records.findIndex((r) => r.type === 'TXT' && r.name === rsaName)
  records.splice(rsa < 0 ? records.length : rsa + 1, 0, ...extraDkimRecords(domain, nowMs))
  records.push(...hostRecords(config, domain, spf.value))
  const key = (r: { type: string, name: string, value: string }): string => `${r.type} ${r.name} ${r.value}`
  const checked = new Set(domain.records.filter((r) => r.verified === true).map(key))
  const foundBefore = new Set(domain.records.filter((r) => r.verified === true && isSpf(r)).map((r) => r.name))
  return records.map((r): ShownRecord => {
    // A domain added when the suggested rua was the domain's own mailbox is shown the report address read here.
    const isDmarc = r.type === 'TXT' && r.name === `_dmarc.${domain.name}` && r.value.includes('rua=mailto:dmarc-reports@')
    const value = isSpf(r)
      ? spf.value
      : r.type === 'MX' ? mxValue(config) : r.type === 'CNAME' ? cnameValue(config) : isDmarc ? dmarcRecordValue(domain.name) : r.value
    const shown: ShownRecord = { type: r.type, name: r.name, value, verified: value !== '' && checked.has(key({ ...r, value })) }
    if (r.listed_until !== undefined) shown.listed_until = r.listed_until
    if (r.type === 'MX' && value === '') shown.warning = MX_HOST_WARNING
    if (r.type === 'CNAME' && value === '') shown.warning = CNAME_HOST_WARNING
    if (isSpf(r) && spf.warning !== undefined) shown.warning = spf.warning
    else if (isSpf(r) && !shown.verified && domain.status === 'verified' && foundBefore.has(r.name)) shown.warning = SPF_CHANGED_WARNING
    return shown
  })
}

/**
 * A new domain record with its own DKIM keys: RSA-2048 under `ob<yyyymm>` and ed25519 under the same selector
 * with `ed` appended. A domain created verified (by the operator) signs with both at once.
 */
export async function buildDomain (
  config: Config, orgId: string, name: string, verified: boolean, spf: string
): Promise<DomainRecord> {
  const now = new Date()
  const selector = `ob${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`
  const [rsa, ed25519] = await Promise.all([rsaKey(selector), ed25519Key(ed25519Selector(selector))])
  const record: DomainRecord = {
    id: newId('dom'),
    org_id: orgId,
    name: name.toLowerCase(),
    status: verified ? 'verified' : 'pending',
    dkim_selector: selector,
    dkim_private_key: rsa.private_key,
    dkim_public_key: rsa.public_key,
    dkim_ed25519: ed25519,
    // A domain created verified (bootstrap, or verification off) counts its records as checked.
    records: dnsRecords(config, name.toLowerCase(), selector, rsa.public_key, spf)
      .map((r) => ({ ...r, verified: verified && r.value !== '' })),
    created_at: now.toISOString()
  }
  if (verified) record.verified_at = record.dkim_ed25519_verified_at = record.created_at
  return record
}
