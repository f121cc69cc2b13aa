import type { Config } from '../../config/mod.ts'
import { ApiError, DEFAULT_POOL, type ApiKeyRecord, type DomainRecord, type OrgRecord } from '../../protocol/mod.ts'
import { planLimit, suppressionKey, type ControlPlane } from '../../stores/control_plane/mod.ts'
import { isLive } from './api_keys.ts'
import { buildApiKey } from './orgs.ts'
import { claimStatus, releaseDomainName } from './domain_claims.ts'
import { removeRoute } from './inbound_routes.ts'

/**
 * The operator's actions on a whole organisation that reach past its record: what the operator API and the CLI show
 * of one, deleting it with everything it owns, and replacing its admin key. The record itself is written only by
 * `cp.organizations` (stores/control_plane/organizations.ts); keys, domains and the rest through their own helpers.
 */

/** Live keys, domains and webhooks per organisation, counted in one pass over each bucket's mirror (no round trip). */
export interface OrgCounts { api_keys: number, domains: number, webhooks: number }

export function countsByOrg (cp: ControlPlane, nowMs = Date.now()): Map<string, OrgCounts> {
  const out = new Map<string, OrgCounts>()
  const of = (orgId: string): OrgCounts => {
    let c = out.get(orgId)
    if (c === undefined) out.set(orgId, c = { api_keys: 0, domains: 0, webhooks: 0 })
    return c
  }
  for (const k of cp.apiKeys.list('key_')) if (isLive(k, nowMs)) of(k.org_id).api_keys++
  for (const d of cp.domains.list()) of(d.org_id).domains++
  for (const w of cp.webhooks.list()) of(w.org_id).webhooks++
  return out
}

/** What the operator sees of an organisation; `counts` when they were counted (lists and single reads both do). */
export function orgView (org: OrgRecord, config: Config, counts?: OrgCounts): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: org.id,
    name: org.name,
    plan: org.plan,
    rate_limit_per_minute: planLimit(org, config.plans.enterpriseRateLimit),
    status: org.status ?? 'active',
    egress_pool: org.egress_pool ?? DEFAULT_POOL,
    created_at: org.created_at
  }
  if (org.suspended_at !== undefined) v.suspended_at = org.suspended_at
  if (counts !== undefined) v.counts = counts
  return v
}

/**
 * One organisation with its counts, its domains and its broadcast streams, each with the egress pool assigned to it
 * (null: none of its own, so its mail leaves from the next in stream → domain → organisation → default).
 */
export function orgDetail (cp: ControlPlane, config: Config, org: OrgRecord): Record<string, unknown> {
  const counts = countsByOrg(cp).get(org.id) ?? { api_keys: 0, domains: 0, webhooks: 0 }
  const domains = cp.domains.list(`${org.id}.`)
    .map((d) => ({ id: d.id, name: d.name, status: claimStatus(cp, d), egress_pool: d.egress_pool ?? null }))
  const streams = cp.streams.list(org.id).map((st) => ({ id: st.id, egress_pool: st.egress_pool ?? null }))
  return { ...orgView(org, config, counts), domains, streams }
}

export function requireOrg (cp: ControlPlane, id: string): OrgRecord {
  const org = cp.orgs.get(id)
  if (org === undefined) throw new ApiError('not_found', `No organisation with id ${id}.`)
  return org
}

function orgApiKeys (cp: ControlPlane, orgId: string): ApiKeyRecord[] {
  return cp.apiKeys.list('key_').filter((k) => k.org_id === orgId)
}

/** Deletes run this many at a time: an organisation may hold thousands of suppressions. */
const DELETE_CONCURRENCY = 32

async function deleteAll<T> (items: readonly T[], remove: (item: T) => Promise<void>): Promise<number> {
  for (let i = 0; i < items.length; i += DELETE_CONCURRENCY) await Promise.all(items.slice(i, i + DELETE_CONCURRENCY).map(remove))
  return items.length
}

export interface DeletedOrganization {
  organization_id: string
  deleted: { api_keys: number, webhooks: number, inbound_routes: number, templates: number, suppressions: number, domains: number }
}

/**
 * Deletes an organisation and everything it owns in the control plane. Its keys go first, so nothing can act for it
 * while the rest is removed; its domains last before the record, which frees their names for other organisations.
 * Mail it had queued finds its domain gone and fails (`domain_removed`) without an attempt. A delete that stops
 * half way (NATS lost) is finished by running it again: the record goes only once everything else has.
 */
export async function deleteOrganization (cp: ControlPlane, id: string): Promise<DeletedOrganization> {
  requireOrg(cp, id)
  const prefix = `${id}.`
  const deleted = {
    api_keys: await deleteAll(orgApiKeys(cp, id), async (k) => { await cp.apiKeys.delete(k.id) }),
    webhooks: await deleteAll(cp.webhooks.list(prefix), async (w) => { await cp.webhooks.delete(`${id}.${w.id}`) }),
    inbound_routes: await deleteAll(cp.routes.list(prefix), async (r) => { await removeRoute(cp, r) }),
    templates: await deleteAll(cp.templates.list(prefix), async (t) => { await cp.templates.delete(`${id}.${t.id}`) }),
    suppressions: await deleteAll(cp.suppressionLists.all(id), async (s) => {
      await cp.suppressions.delete(suppressionKey(id, s.email, s.stream))
    }),
    domains: await deleteAll(cp.domains.list(prefix), async (d) => {
      await cp.domains.delete(`${id}.${d.id}`)
      await releaseDomainName(cp, d)
    })
  }
  // broadcast streams are the organisation's names for its mail, nothing to count for the operator
  for (const st of cp.streams.list(id)) await cp.streams.remove(id, st.id)
  // and so are its streams' pauses, which would otherwise stay counted in `outbox_stream_paused`
  for (const p of cp.pauses.list(id)) await cp.pauses.resume(id, p.stream)
  await cp.organizations.remove(id)
  return { organization_id: id, deleted }
}

export interface ResetAdminKey { organization_id: string, api_key_id: string, api_key: string, domain_id: string, revoked: string[] }

/** The domain a new admin key is bound to: the last admin key's when it still exists, else the oldest verified one. */
function adminKeyDomain (cp: ControlPlane, orgId: string, admins: readonly ApiKeyRecord[]): DomainRecord | undefined {
  for (const k of [...admins].reverse()) {
    const d = cp.domain(orgId, k.domain_id)
    if (d !== undefined) return d
  }
  const domains = cp.domains.list(`${orgId}.`)
  return domains.find((d) => d.status === 'verified') ?? domains[0]
}

/**
 * Gives the organisation a new live admin key (returned once; only its hash is kept) and revokes every key that held
 * `admin` until now, live or sandbox, rotated ones within their grace period included. The new key is written first,
 * so a failure in between leaves the organisation with an admin key rather than none.
 */
export async function resetAdminKey (cp: ControlPlane, id: string, nowMs = Date.now()): Promise<ResetAdminKey> {
  requireOrg(cp, id)
  const admins = orgApiKeys(cp, id).filter((k) => k.permissions.includes('admin') && isLive(k, nowMs))
  const domain = adminKeyDomain(cp, id, admins.filter((k) => k.environment === 'live'))
  if (domain === undefined) throw new ApiError('unprocessable', `The organisation ${id} has no domain to bind an API key to.`)
  const key = buildApiKey({ orgId: id, domainId: domain.id, name: 'admin', permissions: ['admin'], environment: 'live' })
  await cp.apiKeys.put(key.record.id, key.record)
  const at = new Date(nowMs).toISOString()
  await Promise.all(admins.map(async (k) => {
    await cp.apiKeys.modify(k.id, (cur) => (cur.revoked_at !== undefined ? undefined : { ...cur, revoked_at: at }))
  }))
  return { organization_id: id, api_key_id: key.record.id, api_key: key.value, domain_id: domain.id, revoked: admins.map((k) => k.id) }
}
