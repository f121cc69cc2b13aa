import { ApiError, newId, sha256Hex, type ApiKeyRecord, type RouteRecord } from '../../protocol/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'

/** `local@domain` or `*@domain`; the local part uses the RFC 5322 atom characters and dots. */
export const ROUTE_MATCH_PATTERN = "^(\\*|[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64})@" +
  '([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$'

const STALE_CLAIM_MS = 60_000

export function routeView (r: RouteRecord): Record<string, unknown> {
  return { id: r.id, match: r.match, action: r.action, created_at: r.created_at }
}

/**
 * Key of the claim that makes a match unique within an organisation. It lives in the settings bucket,
 * so the routes bucket holds only route records for everyone who reads it.
 */
function claimKey (orgId: string, match: string): string {
  return `route_match.${orgId}.${sha256Hex(match).slice(0, 40)}`
}

/** Matches compare case-insensitively, as mail domains and (in practice) local parts do. */
export function normalizeMatch (match: string): string {
  return match.trim().toLowerCase()
}

/**
 * A route may match only a domain of the caller's organisation: one it added (a claim, pending or verified) and
 * that no other organisation has verified; a key without `admin` only its own domain (the one it sends from).
 * Anything else (another organisation's domain, or one nobody added) is 403: mail for it is not the caller's to
 * receive. Mail reaches a route only once its organisation has verified the domain (recipients.ts).
 */
export function assertMayRoute (cp: ControlPlane, key: ApiKeyRecord, match: string): void {
  const domain = match.slice(match.lastIndexOf('@') + 1)
  const owner = cp.domainOwner(domain)
  const claim = owner?.org_id === key.org_id ? owner : cp.domains.list(`${key.org_id}.`).find((d) => d.name === domain)
  if (claim === undefined || (owner !== undefined && owner.org_id !== key.org_id)) {
    throw new ApiError('forbidden', `The domain ${domain} is not a domain of this organisation; add it with POST /v1/domains first.`, {
      field: 'match', details: { domain }
    })
  }
  if (claim.id !== key.domain_id && !key.permissions.includes('admin')) {
    const own = cp.domain(key.org_id, key.domain_id)?.name ?? key.domain_id
    throw new ApiError('forbidden', `This API key is bound to ${own}; a route for ${domain} needs a key of that domain or an admin key.`, {
      field: 'match', details: { domain, key_domain: own }
    })
  }
}

export async function addRoute (cp: ControlPlane, caller: ApiKeyRecord, match: string, includeAttachments: boolean): Promise<RouteRecord> {
  const m = normalizeMatch(match)
  assertMayRoute(cp, caller, m)
  const orgId = caller.org_id
  const taken = (): ApiError => new ApiError('conflict', `A route for ${m} already exists.`, { field: 'match' })
  if (cp.routes.list(`${orgId}.`).some((r) => r.match === m)) throw taken()
  const record: RouteRecord = {
    id: newId('rt'),
    org_id: orgId,
    match: m,
    action: { type: 'webhook', include_attachments: includeAttachments },
    created_at: new Date().toISOString()
  }
  const key = claimKey(orgId, m)
  const id = new TextEncoder().encode(record.id)
  try {
    await cp.settings.create(key, id)
  } catch {
    // A claim whose route never appeared was left by a crash between the two writes; after a minute it is
    // taken over (compare-and-set, so two takers cannot both win). A younger claim is a concurrent create.
    const holder = await cp.settings.get(key)
    if (holder === null) throw taken()
    const holderId = holder.string()
    const stale = Date.now() - holder.created.getTime() > STALE_CLAIM_MS && !cp.routes.list(`${orgId}.`).some((r) => r.id === holderId)
    if (!stale) throw taken()
    try {
      await cp.settings.update(key, id, holder.revision)
    } catch {
      throw taken()
    }
  }
  await cp.routes.put(`${orgId}.${record.id}`, record)
  return record
}

export async function removeRoute (cp: ControlPlane, route: RouteRecord): Promise<void> {
  await cp.routes.delete(`${route.org_id}.${route.id}`)
  await cp.settings.delete(claimKey(route.org_id, route.match)).catch(() => {})
}
