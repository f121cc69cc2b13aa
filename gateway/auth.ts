import type { ApiKeyRecord, ControlPlane, DomainRecord, OrgRecord, Permission } from '../engine/protocol/mod.ts'
import { ApiError, REDIS_KEYS } from '../engine/protocol/mod.ts'
import type { RateLimiter } from './rate_limit.ts'

export interface AuthContext {
  key: ApiKeyRecord
  org: OrgRecord
  domain: DomainRecord
}

const BEARER = /^Bearer +(\S+)$/i
const KEY_SHAPE = /^ob_(?:live|test)_[A-Za-z0-9]{16,64}$/
const FAILED_AUTH_PER_MINUTE = 30

/**
 * Resolves the API key from the in-memory mirror of the key bucket: no network round trip.
 * Only the SHA-256 of the presented value is compared, so no timing-safe compare of unequal lengths arises.
 */
export function authenticate (cp: ControlPlane, authorization: string, nowMs: number): AuthContext {
  const m = BEARER.exec(authorization)
  if (m === null) throw new ApiError('unauthorized', authorization === '' ? 'The Authorization header is missing.' : 'The Authorization header must be "Bearer <API key>".')
  const value = m[1]!
  if (!KEY_SHAPE.test(value)) throw new ApiError('unauthorized', 'The API key is malformed; keys start with ob_live_ or ob_test_.')
  const key = cp.keyByValue(value)
  if (key === undefined) throw new ApiError('unauthorized', 'The API key is not valid.')
  if (key.revoked_at !== undefined) throw new ApiError('unauthorized', 'The API key has been revoked.')
  if (key.expires_at !== undefined && Date.parse(key.expires_at) <= nowMs) throw new ApiError('unauthorized', 'The API key was rotated and its grace period has ended.')
  const org = cp.orgs.get(key.org_id)
  const domain = cp.domain(key.org_id, key.domain_id)
  if (org === undefined || domain === undefined) throw new ApiError('unauthorized', 'The API key is not valid.')
  return { key, org, domain }
}

export function hasPermission (key: ApiKeyRecord, permission: Permission): boolean {
  return key.permissions.includes(permission) || key.permissions.includes('admin')
}

/**
 * Failed authentications are counted per address in Redis (30 a minute, shared by all gateways);
 * past that, this process refuses the address until the bucket allows again, without asking Redis.
 */
export class AuthFailureGuard {
  private readonly blocked = new Map<string, number>()

  constructor (private readonly limiter: RateLimiter) {}

  /** Throws 429 when the address is blocked. */
  check (ip: string, nowMs: number): void {
    const until = this.blocked.get(ip)
    if (until === undefined) return
    if (until > nowMs) {
      throw new ApiError('rate_limited', 'Too many failed authentications from this address.', { retryAfter: Math.max(1, Math.ceil((until - nowMs) / 1000)) })
    }
    this.blocked.delete(ip)
  }

  /** Records one failure; resolves to a 429 error when this failure went over the limit. */
  async fail (ip: string, nowMs: number): Promise<ApiError | undefined> {
    const d = await this.limiter.take(REDIS_KEYS.authFailures(ip), FAILED_AUTH_PER_MINUTE)
    if (d.allowed) return undefined
    this.blocked.set(ip, nowMs + d.retryAfterS * 1000)
    if (this.blocked.size > 100_000) this.blocked.delete(this.blocked.keys().next().value!)
    return new ApiError('rate_limited', 'Too many failed authentications from this address.', { retryAfter: d.retryAfterS })
  }
}
