import type { ApiKeyRecord, DomainRecord, OperatorKeyRecord, OrgRecord, Permission } from '../protocol/mod.ts'
import { OPERATOR_KEY_SHAPE, type ControlPlane } from '../stores/control_plane/mod.ts'
import { ApiError, REDIS_KEYS, isSuspended } from '../protocol/mod.ts'
import type { RateLimiter } from './rate_limit.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

export interface AuthContext {
  key: ApiKeyRecord
  org: OrgRecord
  domain: DomainRecord
}

/** Who calls an operator route: an operator key, which belongs to no organisation. */
export interface OperatorContext {
  key: OperatorKeyRecord
}

const BEARER = /^Bearer +(\S+)$/i
const KEY_SHAPE = /^ob_(?:live|test)_[A-Za-z0-9]{16,64}$/
const FAILED_AUTH_PER_MINUTE = 30
/** A key's display prefix: `ob_live_` or `ob_test_` and 4 characters, what the key list shows (`ApiKeyRecord.prefix`). */
export const KEY_PREFIX_LENGTH = 12

/** The display prefix of the key an Authorization header presents, when it has the shape of a key (an operator key's too). */
export function presentedKeyPrefix (authorization: string): string | undefined {
  const m = BEARER.exec(authorization)
  return m !== null && (KEY_SHAPE.test(m[1]!) || OPERATOR_KEY_SHAPE.test(m[1]!)) ? m[1]!.slice(0, KEY_PREFIX_LENGTH) : undefined
}

/**
 * Resolves the API key from the in-memory mirror of the key bucket: no network round trip.
 * Only the SHA-256 of the presented value is compared, so no timing-safe compare of unequal lengths arises.
 */
export function authenticate (cp: ControlPlane, authorization: string, nowMs: number): AuthContext {
  const m = BEARER.exec(authorization)
  if (m === null) {
    const why = authorization === '' ? 'The Authorization header is missing.' : 'The Authorization header must be "Bearer <API key>".'
    throw new ApiError('unauthorized', why)
  }
  const value = m[1]!
  if (!KEY_SHAPE.test(value)) throw new ApiError('unauthorized', 'The API key is malformed; keys start with ob_live_ or ob_test_.')
  const key = cp.keyByValue(value)
  if (key === undefined) throw new ApiError('unauthorized', 'The API key is not valid.')
  if (key.revoked_at !== undefined) throw new ApiError('unauthorized', 'The API key has been revoked.')
  if (key.expires_at !== undefined && Date.parse(key.expires_at) <= nowMs) {
    throw new ApiError('unauthorized', 'The API key was rotated and its grace period has ended.')
  }
  const org = cp.orgs.get(key.org_id)
  const domain = cp.domain(key.org_id, key.domain_id)
  if (org === undefined || domain === undefined) throw new ApiError('unauthorized', 'The API key is not valid.')
  if (isSuspended(org)) throw suspendedError(org.id)
  return { key, org, domain }
}

/**
 * A valid key of a suspended organisation: it authenticated, it may just do nothing until the operator resumes it,
 * so callers answer it as a refusal (403), never count it as a failed authentication.
 */
export function suspendedError (orgId: string): ApiError {
  return new ApiError('organization_suspended', 'The organisation of this API key is suspended by the operator of this installation.', {
    details: { organization_id: orgId }
  })
}

/**
 * Resolves the operator key of an operator route. A valid organisation key (whatever its permissions, `admin`
 * included) is `403 forbidden`: it authenticated, it just may not do this. Anything else that is not a live
 * operator key is `401 unauthorized`, a failed authentication like any other.
 */
export function authenticateOperator (cp: ControlPlane, authorization: string, nowMs: number): OperatorContext {
  const m = BEARER.exec(authorization)
  if (m === null) {
    const why = authorization === '' ? 'The Authorization header is missing.' : 'The Authorization header must be "Bearer <operator key>".'
    throw new ApiError('unauthorized', why)
  }
  const value = m[1]!
  if (KEY_SHAPE.test(value)) {
    try {
      authenticate(cp, authorization, nowMs) // an unknown or revoked organisation key fails here, as a 401
    } catch (err) {
      // a suspended organisation's key is still an organisation key: what it may not do here is the operator's part
      if (!(err instanceof ApiError && err.code === 'organization_suspended')) throw err
    }
    throw new ApiError('forbidden', 'This endpoint takes an operator key (ob_op_…); organisation keys, admin included, never reach it.', {
      details: { required: 'operator' }
    })
  }
  if (!OPERATOR_KEY_SHAPE.test(value)) throw new ApiError('unauthorized', 'The key is malformed; operator keys start with ob_op_.')
  const key = cp.operatorKeys.byValue(value)
  if (key === undefined) throw new ApiError('unauthorized', 'The operator key is not valid.')
  if (key.revoked_at !== undefined) throw new ApiError('unauthorized', 'The operator key has been revoked.')
  return { key }
}

export function hasPermission (key: ApiKeyRecord, permission: Permission): boolean {
  return key.permissions.includes(permission) || key.permissions.includes('admin')
}

/**
 * The failed-authentication throttle. It only ever sees requests whose authentication failed, so a request with a
 * valid key is never refused by it, whoever else fails from the same address or behind the same load balancer.
 * Failures are counted in Redis (shared by all gateways), 30 a minute per client address and 30 a minute per
 * presented key prefix (a botnet aiming at one known prefix is held to the same pace as one address). Past a
 * limit, this process answers further failures under that address or prefix with 429 until the bucket allows
 * again, without asking Redis.
 */
export class AuthFailureGuard {
  /** `a:<address>` or `p:<prefix>` → blocked until (ms). */
  private readonly blocked = new Map<string, number>()

  constructor (private readonly limiter: RateLimiter, private readonly metrics: OutboxMetrics) {}

  /**
   * The error to answer a failed authentication with: `failure` itself (the 401), or a 429 when the client
   * address or the presented key prefix is over its limit.
   */
  async refusal (failure: unknown, address: string, authorization: string, nowMs: number): Promise<unknown> {
    const counters = [
      { id: `a:${address}`, key: REDIS_KEYS.authFailuresByAddress(address, FAILED_AUTH_PER_MINUTE), what: 'from this address' }
    ]
    const prefix = presentedKeyPrefix(authorization)
    if (prefix !== undefined) {
      counters.push({
        id: `p:${prefix}`, key: REDIS_KEYS.authFailuresByPrefix(prefix, FAILED_AUTH_PER_MINUTE), what: 'with this key prefix'
      })
    }
    for (const c of counters) {
      const until = this.blocked.get(c.id)
      if (until === undefined) continue
      if (until > nowMs) return tooMany(c.what, Math.max(1, Math.ceil((until - nowMs) / 1000)))
      this.blocked.delete(c.id)
    }
    const decisions = await Promise.all(counters.map((c) => this.limiter.take(c.key, FAILED_AUTH_PER_MINUTE)))
    let refusal: ApiError | undefined
    decisions.forEach((d, i) => {
      this.metrics.rateDecisions.auth_failure[d.allowed ? 'allowed' : 'limited'].inc()
      if (d.allowed) return
      this.block(counters[i]!.id, nowMs + d.retryAfterS * 1000)
      refusal ??= tooMany(counters[i]!.what, d.retryAfterS)
    })
    return refusal ?? failure
  }

  private block (id: string, until: number): void {
    this.blocked.set(id, until)
    if (this.blocked.size > 100_000) this.blocked.delete(this.blocked.keys().next().value!)
  }
}

function tooMany (what: string, retryAfter: number): ApiError {
  return new ApiError('rate_limited', `Too many failed authentications ${what}.`, { retryAfter })
}
