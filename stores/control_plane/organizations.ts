import { ApiError, PLANS, PLAN_RATE_LIMITS, newId, type OrgRecord, type PlanName } from '../../protocol/mod.ts'
import type { KvMirror } from './kv_mirror.ts'

/** What the operator sets of a plan: the plan, and for `enterprise` the per-key limit (absent: OB_ENTERPRISE_RATE_LIMIT). */
/** An organisation's retention, as its record holds it. */
export type Retention = NonNullable<OrgRecord['retention']>

export interface PlanInput { plan: PlanName, rate_limit_per_minute?: number }

/** Requests a minute per key of the organisation's plan; `enterpriseDefault` is OB_ENTERPRISE_RATE_LIMIT. */
export function planLimit (org: Pick<OrgRecord, 'plan' | 'rate_limit_per_minute'>, enterpriseDefault: number): number {
  return org.plan === 'enterprise' ? (org.rate_limit_per_minute ?? enterpriseDefault) : PLAN_RATE_LIMITS[org.plan]
}

/** The bound of OB_ENTERPRISE_RATE_LIMIT, which an organisation's own enterprise limit shares. */
export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000

/** A plan's rank: a change to a higher rank is a raise, which only the operator makes. */
export function planRank (plan: PlanName): number {
  return PLANS.indexOf(plan)
}

/**
 * The one writer of organisation records (`ob_orgs`, keyed by id): creating one, its plan, suspending and resuming
 * it, its egress pool (for `egress_config.ts`, which checks the pool), and removing the record when the organisation is
 * deleted. Every write is a compare-and-set on the revision read, so two operators changing one
 * organisation at once never lose a field of the other's change.
 */
export class Organizations {
  constructor (private readonly mirror: KvMirror<OrgRecord>) {}

  get (id: string): OrgRecord | undefined {
    return this.mirror.get(id)
  }

  /** Every organisation, oldest first (ids sort by creation time). */
  list (): OrgRecord[] {
    return this.mirror.list()
  }

  /** `id`: one made beforehand (`newId('org')`) when records keyed by it are built first, as its domain is. */
  async create (input: { id?: string, name: string, plan: PlanName }, now = new Date()): Promise<OrgRecord> {
    const org: OrgRecord = {
      id: input.id ?? newId('org', now.getTime()), name: input.name, plan: input.plan, created_at: now.toISOString()
    }
    await this.mirror.create(org.id, org)
    return org
  }

  /**
   * Sets the plan, and the enterprise limit with it: a limit given for another plan is a validation error, and one left
   * out of an enterprise plan means `OB_ENTERPRISE_RATE_LIMIT` (the record keeps no stale limit from an earlier plan).
   */
  async setPlan (id: string, input: PlanInput): Promise<OrgRecord> {
    const rate = input.rate_limit_per_minute
    if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1 && rate <= MAX_RATE_LIMIT_PER_MINUTE)) {
      const message = `must be a whole number from 1 to ${MAX_RATE_LIMIT_PER_MINUTE}`
      throw ApiError.validation([{ field: 'rate_limit_per_minute', message }])
    }
    if (rate !== undefined && input.plan !== 'enterprise') {
      throw ApiError.validation([{ field: 'rate_limit_per_minute', message: 'is set only with the plan enterprise' }])
    }
    return this.found(id, await this.mirror.modify(id, (cur) => {
      const { rate_limit_per_minute: _old, ...rest } = cur
      const next: OrgRecord = { ...rest, plan: input.plan }
      if (input.rate_limit_per_minute !== undefined) next.rate_limit_per_minute = input.rate_limit_per_minute
      return next.plan === cur.plan && next.rate_limit_per_minute === cur.rate_limit_per_minute ? undefined : next
    }))
  }

  /**
   * Sets the days the organisation keeps its messages, events and content (checked against the installation's maxima by
   * the caller); a field left out is kept as it was, a `null` one goes back to the maximum.
   */
  async setRetention (id: string, change: { [K in keyof Retention]?: number | null }): Promise<OrgRecord> {
    return this.found(id, await this.mirror.modify(id, (cur) => {
      const next: Retention = { ...cur.retention }
      for (const k of ['messages_days', 'events_days', 'content_days'] as const) {
        const v = change[k]
        if (v === null) delete next[k]
        else if (v !== undefined) next[k] = v
      }
      const { retention: _old, ...rest } = cur
      const updated: OrgRecord = Object.keys(next).length === 0 ? rest : { ...rest, retention: next }
      return JSON.stringify(updated) === JSON.stringify(cur) ? undefined : updated
    }))
  }

  /** Idempotent: suspending a suspended organisation keeps its first `suspended_at`. */
  async suspend (id: string, now = new Date()): Promise<OrgRecord> {
    return this.found(id, await this.mirror.modify(id, (cur) =>
      cur.status === 'suspended' ? undefined : { ...cur, status: 'suspended', suspended_at: now.toISOString() }))
  }

  /** Idempotent: resuming an active organisation changes nothing. */
  async resume (id: string): Promise<OrgRecord> {
    return this.found(id, await this.mirror.modify(id, (cur) => {
      if (cur.status !== 'suspended') return undefined
      const { suspended_at: _at, ...rest } = cur
      return { ...rest, status: 'active' }
    }))
  }

  /** The egress pool its mail leaves from (undefined: `default`); EgressConfig checks the pool and calls this. */
  async setEgressPool (id: string, pool: string | undefined): Promise<OrgRecord> {
    return this.found(id, await this.mirror.modify(id, (cur) => {
      if (cur.egress_pool === pool) return undefined
      const { egress_pool: _old, ...rest } = cur
      return pool === undefined ? rest : { ...rest, egress_pool: pool }
    }))
  }

  /** The record's removal, the last step of deleting an organisation (gateway/control/org_admin.ts removes the rest first). */
  async remove (id: string): Promise<void> {
    await this.mirror.delete(id)
  }

  private found (id: string, org: OrgRecord | undefined): OrgRecord {
    if (org === undefined) throw new ApiError('not_found', `No organisation with id ${id}.`)
    return org
  }
}
