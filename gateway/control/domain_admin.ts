import type { Config } from '../../config/mod.ts'
import { ApiError, DOMAIN_HOST_KINDS, type DomainRecord } from '../../protocol/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'
import { buildDomain, requestedRecords } from './domains.ts'
import { spfPolicy } from './spf.ts'
import { dkimView } from './dkim_keys.ts'
import { claimStatus, releaseDomainName, verifiedElsewhere } from './domain_claims.ts'
import { isLive } from './api_keys.ts'

/** A DNS name of at least two labels, letters, digits and hyphens (lower-cased before the check). */
export const DOMAIN_NAME_PATTERN = '^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$'
const DOMAIN_NAME = new RegExp(DOMAIN_NAME_PATTERN)

export function isDomainName (name: string): boolean {
  return DOMAIN_NAME.test(name)
}

export function domainView (cp: ControlPlane, config: Config, d: DomainRecord): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: d.id,
    name: d.name,
    status: claimStatus(cp, d),
    records: requestedRecords(config, d, spfPolicy(config, cp.egress)),
    dkim: dkimView(d),
    created_at: d.created_at
  }
  if (d.verified_at !== undefined) v.verified_at = d.verified_at
  for (const kind of DOMAIN_HOST_KINDS) {
    const chosen = d[kind]
    if (chosen !== undefined) v[`${kind}_host`] = { host: chosen.host, verified: chosen.verified_at !== undefined }
  }
  return v
}

/**
 * Adds a pending claim on a domain, with its own DKIM key. Other organisations' pending claims on the name do not
 * stand in the way (the first to verify owns it); a name already verified does (409), as does a second claim of
 * the same organisation. Two concurrent adds of one name by one organisation may both be stored: harmless, as
 * each has its own key and the one verified owns the name, which lapses the other.
 */
export async function addDomain (cp: ControlPlane, config: Config, orgId: string, rawName: string): Promise<DomainRecord> {
  const name = rawName.trim().replace(/\.$/, '').toLowerCase()
  if (!isDomainName(name)) throw ApiError.validation([{ field: 'name', message: 'must be a domain name such as mail.example.com' }])
  const owner = cp.domainOwner(name)
  if (owner !== undefined) throw verifiedElsewhere(name, 'name', owner.org_id === orgId ? orgId : undefined)
  if (cp.domains.list(`${orgId}.`).some((d) => d.name === name)) {
    throw new ApiError('conflict', `This organisation already has a claim on ${name}.`, { field: 'name' })
  }
  const domain = await buildDomain(config, orgId, name, false, spfPolicy(config, cp.egress).value)
  await cp.domains.put(`${orgId}.${domain.id}`, domain)
  return domain
}

/**
 * Removes a domain and, when it owns its name, frees the name. Keys bound to a domain send from it, so a domain
 * with live keys is refused with 409 rather than leaving those keys unable to authenticate.
 */
export async function removeDomain (cp: ControlPlane, domain: DomainRecord, nowMs = Date.now()): Promise<void> {
  const bound = cp.apiKeys.list('key_').filter((k) => k.org_id === domain.org_id && k.domain_id === domain.id && isLive(k, nowMs))
  if (bound.length > 0) {
    throw new ApiError('conflict', `The domain ${domain.name} still has ${bound.length} live API key(s) bound to it; revoke them first.`, {
      details: { api_key_ids: bound.slice(0, 20).map((k) => k.id) }
    })
  }
  await cp.domains.delete(`${domain.org_id}.${domain.id}`)
  await releaseDomainName(cp, domain)
}
