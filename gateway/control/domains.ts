import type { Config } from '../../config/mod.ts'
import { dmarcRecordValue, newId, VERP_SUBDOMAIN, type DomainRecord } from '../../protocol/mod.ts'
import { dkimRecordName, ed25519Key, ed25519Selector, extraDkimRecords, rsaKey, type DnsRecordListed } from './dkim_keys.ts'

/** Host part of the public URL, as SPF and the bounce MX need it. */
function publicHost (config: Config): string {
  return new URL(config.http.publicUrl).hostname
}

/** The return-path (VERP) domain: the envelope sender of every message, so the name receivers check SPF for. */
export function returnPathDomain (name: string): string {
  return `${VERP_SUBDOMAIN}${name}`
}

/** Shown on the return-path MX record when no host name is known for it. */
export const MX_HOST_WARNING = 'No MX host name is configured: OB_PUBLIC_URL names an address and an MX record must name a host. ' +
  'Set OB_MX_HOST to the host name that receives bounces on port 25 and restart; this record is then filled in.'

/** The return-path MX value: priority 10 and the configured host name, or '' when there is none. */
function mxValue (config: Config): string {
  return config.http.mxHost === undefined ? '' : `10 ${config.http.mxHost}`
}

/** A record as the API shows it: the last check's result, and a warning when the record cannot be published as is. */
export type ShownRecord = DnsRecordListed & { verified: boolean, warning?: string }

/**
 * The DNS records a domain owner publishes: SPF for the domain, DKIM, SPF and MX for the return-path domain, and
 * DMARC, whose `rua` is the domain's report address here (protocol/dmarc_address.ts). SPF is checked on the
 * envelope sender (`bounces.<domain>`), so its record there is what makes SPF pass; it aligns with the From domain
 * under DMARC's relaxed rule (same organisational domain).
 */
export function dnsRecords (config: Config, name: string, selector: string, publicKeyB64: string): DomainRecord['records'] {
  const host = publicHost(config)
  const spfMechanism = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? `ip4:${host}` : `a:${host}`
  return [
    { type: 'TXT', name, value: `v=spf1 ${spfMechanism} ~all` },
    { type: 'TXT', name: `${selector}._domainkey.${name}`, value: `v=DKIM1; k=rsa; p=${publicKeyB64}` },
    { type: 'TXT', name: returnPathDomain(name), value: `v=spf1 ${spfMechanism} ~all` },
    { type: 'MX', name: returnPathDomain(name), value: mxValue(config) },
    { type: 'TXT', name: `_dmarc.${name}`, value: dmarcRecordValue(name) }
  ]
}

/**
 * The records a domain is asked to publish, each with the result of the last check. A domain added before the
 * return-path SPF record was part of the set is stored without it; it gets one with the mechanism of its own SPF
 * record, just before the return-path MX. The other DKIM records (ed25519, a rotation's pair, replaced keys still
 * listed) follow the signing RSA key's. The MX record always names the host configured now (`OB_MX_HOST`), so a
 * domain added under another setting (or before MX needed a name) is shown what to publish today; a record whose
 * value changed since the last check counts as not verified.
 */
export function requestedRecords (config: Config, domain: DomainRecord, nowMs = Date.now()): ShownRecord[] {
  const returnPath = returnPathDomain(domain.name)
  const rsaName = dkimRecordName(domain.name, domain.dkim_selector)
  // the stored set holds the signing RSA key's record; every other DKIM record is listed from the key state
  const records: DnsRecordListed[] = domain.records.filter((r) => r.name === rsaName || !r.name.includes('._domainkey.'))
  const spf = records.find((r) => r.type === 'TXT' && r.name === domain.name && r.value.startsWith('v=spf1'))
  if (spf !== undefined && !records.some((r) => r.type === 'TXT' && r.name === returnPath)) {
    const mx = records.findIndex((r) => r.type === 'MX' && r.name === returnPath)
    records.splice(mx < 0 ? records.length : mx, 0, { type: 'TXT', name: returnPath, value: spf.value })
  }
  const rsa = records.findIndex((r) => r.type === 'TXT' && r.name === rsaName)
  records.splice(rsa < 0 ? records.length : rsa + 1, 0, ...extraDkimRecords(domain, nowMs))
  const checked = new Set(domain.records.filter((r) => r.verified === true).map((r) => `${r.type} ${r.name} ${r.value}`))
  return records.map((r): ShownRecord => {
    const isMx = r.type === 'MX' && r.name === returnPath
    // A domain added when the suggested rua was the domain's own mailbox is shown the report address read here.
    const isDmarc = r.type === 'TXT' && r.name === `_dmarc.${domain.name}` && r.value.includes('rua=mailto:dmarc-reports@')
    const value = isMx ? mxValue(config) : isDmarc ? dmarcRecordValue(domain.name) : r.value
    const shown: ShownRecord = { type: r.type, name: r.name, value, verified: value !== '' && checked.has(`${r.type} ${r.name} ${value}`) }
    if (r.listed_until !== undefined) shown.listed_until = r.listed_until
    if (isMx && value === '') shown.warning = MX_HOST_WARNING
    return shown
  })
}

/**
 * A new domain record with its own DKIM keys: RSA-2048 under `ob<yyyymm>` and ed25519 under the same selector
 * with `ed` appended. A domain created verified (by the operator) signs with both at once.
 */
export async function buildDomain (config: Config, orgId: string, name: string, verified: boolean): Promise<DomainRecord> {
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
    records: dnsRecords(config, name.toLowerCase(), selector, rsa.public_key).map((r) => ({ ...r, verified: verified && r.value !== '' })),
    created_at: now.toISOString()
  }
  if (verified) record.verified_at = record.dkim_ed25519_verified_at = record.created_at
  return record
}
