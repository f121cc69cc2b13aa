import { generateKeyPair } from 'node:crypto'
import { promisify } from 'node:util'
import type { Config } from '../../config/mod.ts'
import { newId, type DomainRecord } from '../../engine/protocol/mod.ts'

const generateKeyPairAsync = promisify(generateKeyPair)

/** Host part of the public URL, as SPF and the bounce MX need it. */
function publicHost (config: Config): string {
  return new URL(config.http.publicUrl).hostname
}

/** The DNS records a domain owner publishes: SPF, DKIM, the VERP return-path MX and DMARC. */
export function dnsRecords (config: Config, name: string, selector: string, publicKeyB64: string): DomainRecord['records'] {
  const host = publicHost(config)
  const spfMechanism = /^\d+\.\d+\.\d+\.\d+$/.test(host) ? `ip4:${host}` : `a:${host}`
  return [
    { type: 'TXT', name, value: `v=spf1 ${spfMechanism} ~all` },
    { type: 'TXT', name: `${selector}._domainkey.${name}`, value: `v=DKIM1; k=rsa; p=${publicKeyB64}` },
    { type: 'MX', name: `bounces.${name}`, value: `10 ${host}` },
    { type: 'TXT', name: `_dmarc.${name}`, value: `v=DMARC1; p=none; rua=mailto:dmarc-reports@${name}` }
  ]
}

/** A new domain record with its own 2048-bit DKIM key pair. */
export async function buildDomain (config: Config, orgId: string, name: string, verified: boolean): Promise<DomainRecord> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' }
  })
  const now = new Date()
  const selector = `ob${now.getUTCFullYear()}${String(now.getUTCMonth() + 1).padStart(2, '0')}`
  const publicKeyB64 = publicKey.toString('base64')
  const record: DomainRecord = {
    id: newId('dom'),
    org_id: orgId,
    name: name.toLowerCase(),
    status: verified ? 'verified' : 'pending',
    dkim_selector: selector,
    dkim_private_key: privateKey,
    dkim_public_key: publicKeyB64,
    records: dnsRecords(config, name.toLowerCase(), selector, publicKeyB64),
    created_at: now.toISOString()
  }
  if (verified) record.verified_at = record.created_at
  return record
}
