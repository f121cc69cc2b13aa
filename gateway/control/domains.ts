import type { Config } from '../../config/mod.ts'
import { newId, VERP_SUBDOMAIN, type DomainRecord } from '../../protocol/mod.ts'
import { dkimRecordName, ed25519Key, ed25519Selector, extraDkimRecords, rsaKey, type DnsRecordListed } from './dkim_keys.ts'

/** Host part of the public URL, as SPF and the bounce MX need it. */
function publicHost (config: Config): string {
  return new URL(config.http.publicUrl).hostname
}

/** The return-path (VERP) domain: the envelope sender of every message, so the name receivers check SPF for. */
export function returnPathDomain (name: string): string {
  return `${VERP_SUBDOMAIN}${name}`
}

/**
 * The DNS records a domain owner publishes: SPF for the domain, DKIM, SPF and MX for the return-path domain, and
 * DMARC. SPF is checked on the envelope sender (`bounces.<domain>`), so its record there is what makes SPF pass;
 * it aligns with the From domain under DMARC's relaxed rule (same organisational domain).
 */
export function dnsRecords (config: Config, name: string, selector: string, publicKeyB64: string): DomainRecord['records'] {
  const host = publicHost(config)
  const spfMechanism = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? `ip4:${host}` : `a:${host}`
  return [
    { type: 'TXT', name, value: `v=spf1 ${spfMechanism} ~all` },
    { type: 'TXT', name: `${selector}._domainkey.${name}`, value: `v=DKIM1; k=rsa; p=${publicKeyB64}` },
    { type: 'TXT', name: returnPathDomain(name), value: `v=spf1 ${spfMechanism} ~all` },
    { type: 'MX', name: returnPathDomain(name), value: `10 ${host}` },
    { type: 'TXT', name: `_dmarc.${name}`, value: `v=DMARC1; p=none; rua=mailto:dmarc-reports@${name}` }
  ]
}

/**
 * The records a domain is asked to publish. A domain added before the return-path SPF record was part of the set
 * is stored without it; it gets one with the mechanism of its own SPF record, just before the return-path MX.
 * The other DKIM records (ed25519, a rotation's pair, replaced keys still listed) follow the signing RSA key's.
 */
export function requestedRecords (domain: DomainRecord, nowMs = Date.now()): DnsRecordListed[] {
  const returnPath = returnPathDomain(domain.name)
  const records: DnsRecordListed[] = [...domain.records]
  const spf = domain.records.find((r) => r.type === 'TXT' && r.name === domain.name && r.value.startsWith('v=spf1'))
  if (spf !== undefined && !domain.records.some((r) => r.type === 'TXT' && r.name === returnPath)) {
    const mx = records.findIndex((r) => r.type === 'MX' && r.name === returnPath)
    records.splice(mx < 0 ? records.length : mx, 0, { type: 'TXT', name: returnPath, value: spf.value })
  }
  const rsa = records.findIndex((r) => r.type === 'TXT' && r.name === dkimRecordName(domain.name, domain.dkim_selector))
  records.splice(rsa < 0 ? records.length : rsa + 1, 0, ...extraDkimRecords(domain, nowMs))
  return records
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
    records: dnsRecords(config, name.toLowerCase(), selector, rsa.public_key),
    created_at: now.toISOString()
  }
  if (verified) record.verified_at = record.dkim_ed25519_verified_at = record.created_at
  return record
}
