import { ApiError, type ApiKeyRecord, type Permission } from '../../protocol/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'
import { hasPermission } from '../auth.ts'
import { buildApiKey } from './orgs.ts'

export const MAX_GRACE_MINUTES = 10_080 // 7 days

/** What lists and single reads show: never the value or its hash. */
export function keyView (k: ApiKeyRecord): Record<string, unknown> {
  const v: Record<string, unknown> = {
    id: k.id, name: k.name, domain_id: k.domain_id, permissions: k.permissions, environment: k.environment,
    prefix: k.prefix, last4: k.last4, created_at: k.created_at
  }
  if (k.revoked_at !== undefined) v.revoked_at = k.revoked_at
  if (k.expires_at !== undefined) v.expires_at = k.expires_at
  if (k.replaced_by !== undefined) v.replaced_by = k.replaced_by
  if (k.default_stream !== undefined) v.default_stream = k.default_stream
  return v
}

/** A key authenticates while it is neither revoked nor past the end of its rotation grace period. */
export function isLive (k: ApiKeyRecord, nowMs = Date.now()): boolean {
  return k.revoked_at === undefined && (k.expires_at === undefined || Date.parse(k.expires_at) > nowMs)
}

/**
 * The privilege rule: a key may only hand out, keep alive or take away permissions it holds itself
 * (admin holds all of them). Without it a `manage` key could mint an `admin` key and read billing.
 */
export function assertMayGrant (caller: ApiKeyRecord, permissions: readonly Permission[], action: string): void {
  const missing = permissions.filter((p) => !hasPermission(caller, p))
  if (missing.length > 0) {
    throw new ApiError(
      'forbidden',
      `This API key may not ${action} a key with permissions it does not hold itself: ${missing.join(', ')}.`,
      { details: { missing, granted: caller.permissions } }
    )
  }
}

/**
 * The sandbox rule: a sandbox (`ob_test_`) key never issues a live key, by creating one or by rotating a live key
 * into a new value, so a key handed out for testing can never become one that sends real mail.
 */
export function assertMayIssue (caller: ApiKeyRecord, environment: 'live' | 'test', action: string): void {
  if (caller.environment === 'test' && environment === 'live') {
    throw new ApiError('forbidden', `A sandbox (ob_test_) API key may not ${action} a live (ob_live_) key; use a live key with manage.`, {
      details: { environment: caller.environment }
    })
  }
}

/** Keys are stored by id alone, so ownership is checked here rather than by `ownedRecord`. */
export function ownedKey (cp: ControlPlane, orgId: string, id: string): ApiKeyRecord {
  const key = cp.apiKeys.get(id)
  if (key === undefined) throw new ApiError('not_found', `No API key with id ${id}.`)
  if (key.org_id !== orgId) throw new ApiError('forbidden', `The API key ${id} belongs to another organisation.`)
  return key
}

export function orgKeys (cp: ControlPlane, orgId: string): ApiKeyRecord[] {
  return cp.apiKeys.list('key_').filter((k) => k.org_id === orgId)
}

export interface Rotation { created: ApiKeyRecord, value: string, oldExpiresAt: string }

/**
 * Issues a new key with the old one's name, domain, permissions and environment, and gives the old key
 * `expires_at = now + grace` (with 0 it is revoked at once). The new key is written first, so a failure in
 * between leaves the old key working rather than none.
 */
export async function rotateKey (cp: ControlPlane, old: ApiKeyRecord, graceMinutes: number, nowMs = Date.now()): Promise<Rotation> {
  if (old.revoked_at !== undefined) throw new ApiError('conflict', `The API key ${old.id} is revoked and cannot be rotated.`)
  if (old.replaced_by !== undefined) {
    throw new ApiError('conflict', `The API key ${old.id} was already rotated into ${old.replaced_by}; rotate that key instead.`, {
      details: { replaced_by: old.replaced_by }
    })
  }
  if (!isLive(old, nowMs)) throw new ApiError('conflict', `The API key ${old.id} has expired and cannot be rotated.`)
  const fresh = buildApiKey({
    orgId: old.org_id, domainId: old.domain_id, name: old.name, permissions: old.permissions, environment: old.environment
  })
  // the new key sends on the same default stream as the one it replaces
  if (old.default_stream !== undefined) fresh.record.default_stream = old.default_stream
  const expiresAt = new Date(nowMs + graceMinutes * 60_000).toISOString()
  await cp.apiKeys.put(fresh.record.id, fresh.record)
  const updated = await cp.apiKeys.modify(old.id, (cur) => {
    if (cur.replaced_by !== undefined || cur.revoked_at !== undefined) return undefined
    const next: ApiKeyRecord = { ...cur, replaced_by: fresh.record.id, expires_at: expiresAt }
    if (graceMinutes === 0) next.revoked_at = expiresAt
    return next
  })
  if (updated === undefined || updated.replaced_by !== fresh.record.id) {
    // Another rotation or a revocation won the race: withdraw the key just issued.
    await cp.apiKeys.delete(fresh.record.id)
    throw new ApiError('conflict', `The API key ${old.id} was rotated or revoked at the same time; read it again.`)
  }
  return { created: fresh.record, value: fresh.value, oldExpiresAt: expiresAt }
}

/** Revocation is idempotent: a second DELETE keeps the first `revoked_at`. */
export async function revokeKey (cp: ControlPlane, key: ApiKeyRecord, nowMs = Date.now()): Promise<void> {
  await cp.apiKeys.modify(key.id, (cur) =>
    (cur.revoked_at !== undefined ? undefined : { ...cur, revoked_at: new Date(nowMs).toISOString() }))
}
