import { ApiError, newId, sha256Hex, type ControlPlane, type RouteRecord } from '../../engine/protocol/mod.ts'

/** `local@domain` or `*@domain`; the local part uses the RFC 5322 atom characters and dots. */
export const ROUTE_MATCH_PATTERN = "^(\\*|[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64})@([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$"

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

export async function addRoute (cp: ControlPlane, orgId: string, match: string, includeAttachments: boolean): Promise<RouteRecord> {
  const m = normalizeMatch(match)
  const domain = m.slice(m.lastIndexOf('@') + 1)
  const owner = cp.domainOwner(domain)
  if (owner !== undefined && owner.org_id !== orgId) {
    throw new ApiError('conflict', `The domain ${domain} is verified by another organisation; only it may route the domain's mail.`, { field: 'match' })
  }
  const taken = (): ApiError => new ApiError('conflict', `A route for ${m} already exists.`, { field: 'match' })
  if (cp.routes.list(`${orgId}.`).some((r) => r.match === m)) throw taken()
  const record: RouteRecord = { id: newId('rt'), org_id: orgId, match: m, action: { type: 'webhook', include_attachments: includeAttachments }, created_at: new Date().toISOString() }
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
