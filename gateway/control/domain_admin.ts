import type { Config } from '../../config/mod.ts'
import { ApiError, KvConflictError, type ControlPlane, type DomainRecord } from '../../engine/protocol/mod.ts'
import { buildDomain, requestedRecords } from './domains.ts'
import { isLive } from './api_keys.ts'

/** A DNS name of at least two labels, letters, digits and hyphens (lower-cased before the check). */
export const DOMAIN_NAME_PATTERN = '^(?=.{4,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$'
const DOMAIN_NAME = new RegExp(DOMAIN_NAME_PATTERN)

export function isDomainName (name: string): boolean {
  return DOMAIN_NAME.test(name)
}

export function domainView (d: DomainRecord): Record<string, unknown> {
  const v: Record<string, unknown> = { id: d.id, name: d.name, status: d.status, records: requestedRecords(d), created_at: d.created_at }
  if (d.verified_at !== undefined) v.verified_at = d.verified_at
  return v
}

/**
 * Adds a pending domain with its own DKIM key. The name is claimed in the global name bucket first, so two
 * organisations (or two concurrent requests) can never hold the same domain.
 */
export async function addDomain (cp: ControlPlane, config: Config, orgId: string, rawName: string): Promise<DomainRecord> {
  const name = rawName.trim().replace(/\.$/, '').toLowerCase()
  if (!isDomainName(name)) throw ApiError.validation([{ field: 'name', message: 'must be a domain name such as mail.example.com' }])
  if (cp.domainNames.get(name) !== undefined) throw new ApiError('conflict', `The domain ${name} is already registered.`, { field: 'name' })
  const domain = await buildDomain(config, orgId, name, false)
  try {
    await cp.domainNames.create(name, `${orgId}.${domain.id}`)
  } catch (err) {
    if (err instanceof KvConflictError) throw new ApiError('conflict', `The domain ${name} is already registered.`, { field: 'name', cause: err })
    throw err
  }
  try {
    await cp.domains.put(`${orgId}.${domain.id}`, domain)
  } catch (err) {
    await cp.domainNames.delete(name).catch(() => {})
    throw err
  }
  return domain
}

/**
 * Removes a domain and frees its name. Keys bound to a domain send from it, so a domain with live keys is
 * refused with 409 rather than leaving those keys unable to authenticate.
 */
export async function removeDomain (cp: ControlPlane, domain: DomainRecord, nowMs = Date.now()): Promise<void> {
  const bound = cp.apiKeys.list('key_').filter((k) => k.org_id === domain.org_id && k.domain_id === domain.id && isLive(k, nowMs))
  if (bound.length > 0) {
    throw new ApiError('conflict', `The domain ${domain.name} still has ${bound.length} live API key(s) bound to it; revoke them first.`, {
      details: { api_key_ids: bound.slice(0, 20).map((k) => k.id) }
    })
  }
  await cp.domains.delete(`${domain.org_id}.${domain.id}`)
  if (cp.domainNames.get(domain.name) === `${domain.org_id}.${domain.id}`) await cp.domainNames.delete(domain.name)
}
