import {
  ApiError, DEFAULT_POOL, DEFAULT_POOL_WEIGHT, EGRESS_KEYS, IMPLICIT_DEFAULT_POOL, isEgressName, isProviderKey, limitsErrors,
  poolMembersErrors, sourceInputErrors, type DomainRecord, type EgressPoolRecord, type EgressSettingsRecord, type EgressSourceRecord,
  type FieldError, type LimitOverride, type OrgRecord, type PoolMember, type SourceInput, type StreamRecord, TRANSACTIONAL_STREAM
} from '../../protocol/mod.ts'
import { KvConflictError, type KvMirror } from './kv_mirror.ts'
import type { MessageStreams } from './message_streams.ts'
import type { Organizations } from './organizations.ts'

/** What the `ob_egress` bucket holds; the key says which (protocol/egress/records.ts EGRESS_KEYS). */
export type EgressEntry = EgressSourceRecord | EgressPoolRecord | EgressSettingsRecord

const isSource = (v: EgressEntry | undefined): v is EgressSourceRecord => v !== undefined && 'address' in v
const isPool = (v: EgressEntry | undefined): v is EgressPoolRecord => v !== undefined && 'sources' in v
const isSettings = (v: EgressEntry | undefined): v is EgressSettingsRecord => v !== undefined && !isSource(v) && !isPool(v)

/** How many organisations, domains and streams a 409 `egress_pool_in_use` names; the counts say how many there are. */
const IN_USE_LISTED = 20

function invalid (errors: FieldError[]): void {
  if (errors.length > 0) throw ApiError.validation(errors)
}

/**
 * The operator's egress configuration: sources, pools and limit overrides in `ob_egress`, and the pool assignments
 * on organisation, domain and broadcast stream records. Reads come from the mirror (no round trip: the engine reads them per delivery
 * attempt); every write of this configuration goes through this class, from the operator API and the CLI alike.
 *
 * Deleting a source takes it out of the pools that list it first, then deletes it: mail of those pools is routed
 * over their other sources from its next attempt (routing is resolved per attempt). The one refusal: a source that
 * is the last of a pool (409 `egress_source_in_use`), since the pool would silently fall back to the host's own
 * address. Records of several keys are not written atomically; a reader meets a pool naming a source that no longer
 * exists only between two writes of one removal (or when two operators race), and skips that name.
 */
export class EgressConfig {
  constructor (
    private readonly mirror: KvMirror<EgressEntry>,
    private readonly orgs: KvMirror<OrgRecord>,
    private readonly domains: KvMirror<DomainRecord>,
    /** The one writer of organisation records, which stores the organisation's pool for this class. */
    private readonly organizations: Organizations,
    /** The one writer of stream records, which stores a broadcast stream's pool for this class. */
    private readonly streams: MessageStreams
  ) {}

  /** Every source, by name. */
  sources (): EgressSourceRecord[] {
    return this.mirror.list('source.').filter(isSource)
  }

  source (name: string): EgressSourceRecord | undefined {
    const v = this.mirror.get(EGRESS_KEYS.source(name))
    return isSource(v) ? v : undefined
  }

  /** Every pool by name, `default` included (its implicit form while no record exists). */
  pools (): EgressPoolRecord[] {
    const pools = this.mirror.list('pool.').filter(isPool)
    if (!pools.some((p) => p.name === DEFAULT_POOL)) pools.push(IMPLICIT_DEFAULT_POOL)
    return pools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  /** The pool, or undefined; `default` always exists (without a record: no sources, the host's own address). */
  pool (name: string): EgressPoolRecord | undefined {
    const v = this.mirror.get(EGRESS_KEYS.pool(name))
    if (isPool(v)) return v
    return name === DEFAULT_POOL ? IMPLICIT_DEFAULT_POOL : undefined
  }

  settings (): EgressSettingsRecord {
    const v = this.mirror.get(EGRESS_KEYS.settings)
    return isSettings(v) ? v : {}
  }

  /**
   * Calls `fn` after each change of a source, pool or the overrides this mirror applies (not of assignments: those
   * are on the organisation and domain records), for a reader that keeps its own copy (a thread). Returns the unsubscribe.
   */
  onChange (fn: () => void): () => void {
    return this.mirror.onChange(() => { fn() })
  }

  async addSource (input: SourceInput & { name: string }, now = new Date()): Promise<EgressSourceRecord> {
    invalid(sourceInputErrors(input, false))
    const at = now.toISOString()
    const record: EgressSourceRecord = { name: input.name, address: input.address!, ehlo: input.ehlo!, created_at: at, updated_at: at }
    if (input.warmup != null) record.warmup = warmupOf(input.warmup, at)
    try {
      await this.mirror.create(EGRESS_KEYS.source(record.name), record)
    } catch (err) {
      if (err instanceof KvConflictError) throw new ApiError('conflict', `A source named ${record.name} exists already.`)
      throw err
    }
    return record
  }

  /** Changes the address, EHLO name or warm-up (`warmup: null` ends it); the name stays. */
  async changeSource (name: string, input: SourceInput, now = new Date()): Promise<EgressSourceRecord> {
    invalid(sourceInputErrors(input, true))
    const at = now.toISOString()
    const next = await this.mirror.modify(EGRESS_KEYS.source(name), (cur) => {
      if (!isSource(cur)) return undefined
      const out: EgressSourceRecord = { ...cur, updated_at: at }
      if (input.address !== undefined) out.address = input.address
      if (input.ehlo !== undefined) out.ehlo = input.ehlo
      if (input.warmup === null) delete out.warmup
      else if (input.warmup !== undefined) out.warmup = warmupOf(input.warmup, at)
      return out
    })
    if (!isSource(next)) throw new ApiError('not_found', `No source named ${name}.`)
    return next
  }

  /** Takes the source out of every pool, then deletes it; returns the pools it was taken out of. */
  async removeSource (name: string, now = new Date()): Promise<{ name: string, removed_from_pools: string[] }> {
    if (this.source(name) === undefined) throw new ApiError('not_found', `No source named ${name}.`)
    const using = this.pools().filter((p) => p.sources.some((m) => m.source === name))
    const emptied = using.filter((p) => p.sources.length === 1).map((p) => p.name)
    if (emptied.length > 0) {
      throw new ApiError('egress_source_in_use',
        `The source ${name} is the last one of the pool${emptied.length > 1 ? 's' : ''} ${emptied.join(', ')}; ` +
        'give the pool another source or delete it first.', { details: { pools: emptied } })
    }
    const at = now.toISOString()
    for (const p of using) {
      await this.mirror.modify(EGRESS_KEYS.pool(p.name), (cur) => {
        if (!isPool(cur) || !cur.sources.some((m) => m.source === name)) return undefined
        const sources = cur.sources.filter((m) => m.source !== name)
        // a pool emptied by a change made meanwhile keeps its last source; the delete below then leaves it naming one
        // that no longer exists, which readers skip
        return sources.length === 0 ? undefined : { ...cur, sources, updated_at: at }
      })
    }
    await this.mirror.delete(EGRESS_KEYS.source(name))
    return { name, removed_from_pools: using.map((p) => p.name) }
  }

  /** Creates or replaces a pool (idempotent); every source it names must exist (422 otherwise). */
  async putPool (name: string, members: Array<{ source: string, weight?: number }>, now = new Date()): Promise<EgressPoolRecord> {
    const errors = isEgressName(name) ? [] : [{ field: 'name', message: 'is not a pool name' }]
    invalid([...errors, ...poolMembersErrors(name, members)])
    const unknown = members.map((m) => m.source).filter((s) => this.source(s) === undefined)
    if (unknown.length > 0) {
      throw new ApiError('unprocessable', `No source named ${unknown.join(', ')}; add ${unknown.length > 1 ? 'them' : 'it'} first.`, {
        field: 'sources', details: { unknown_sources: unknown }
      })
    }
    const sources: PoolMember[] = members.map((m) => ({ source: m.source, weight: m.weight ?? DEFAULT_POOL_WEIGHT }))
    const at = now.toISOString()
    const key = EGRESS_KEYS.pool(name)
    return await this.upsert(key, (cur) => {
      if (isPool(cur) && JSON.stringify(cur.sources) === JSON.stringify(sources)) return undefined
      return { name, sources, created_at: isPool(cur) ? cur.created_at : at, updated_at: at }
    }) as EgressPoolRecord
  }

  /**
   * Deletes a pool no organisation, domain or stream is assigned to (409 `egress_pool_in_use` naming them otherwise).
   * `default` cannot go away: deleting it forgets its sources, so it is the host's own address again.
   */
  async removePool (name: string): Promise<void> {
    if (name === DEFAULT_POOL) {
      if (this.mirror.get(EGRESS_KEYS.pool(name)) !== undefined) await this.mirror.delete(EGRESS_KEYS.pool(name))
      return
    }
    if (this.pool(name) === undefined) throw new ApiError('not_found', `No pool named ${name}.`)
    const orgs = this.orgs.list().filter((o) => o.egress_pool === name).map((o) => o.id)
    const domains = this.domains.list().filter((d) => d.egress_pool === name).map((d) => ({ id: d.id, organization_id: d.org_id }))
    const streams = this.streams.withEgressPool(name).map((st) => ({ id: st.id, organization_id: st.org_id }))
    if (orgs.length + domains.length + streams.length > 0) {
      throw new ApiError('egress_pool_in_use',
        `The pool ${name} is assigned to ${orgs.length} organisation(s), ${domains.length} domain(s) and ${streams.length} stream(s); ` +
        'assign them another pool first.', {
          details: {
            organizations: orgs.slice(0, IN_USE_LISTED), organization_count: orgs.length,
            domains: domains.slice(0, IN_USE_LISTED), domain_count: domains.length,
            streams: streams.slice(0, IN_USE_LISTED), stream_count: streams.length
          }
        })
    }
    await this.mirror.delete(EGRESS_KEYS.pool(name))
  }

  /** Replaces the whole override table (idempotent). */
  async putLimits (limits: Record<string, LimitOverride>): Promise<EgressSettingsRecord> {
    invalid(limitsErrors(limits))
    const stored = await this.upsert(EGRESS_KEYS.settings, (cur) => {
      const settings = isSettings(cur) ? cur : {}
      return JSON.stringify(settings.limits ?? {}) === JSON.stringify(limits) ? undefined : { ...settings, limits }
    })
    // Nothing stored yet and nothing to store (`{}` on a fresh installation): the settings are the empty ones.
    return isSettings(stored) ? stored : {}
  }

  /** Sets some keys of one provider's override and removes others (the CLI's `limits set`); an emptied entry goes. */
  async setProviderLimits (provider: string, set: LimitOverride, unset: readonly string[]): Promise<EgressSettingsRecord> {
    if (!isProviderKey(provider)) invalid([{ field: 'provider', message: 'is not a provider id, site or default' }])
    return await this.putLimits(withEntry(this.settings().limits ?? {}, provider, set, unset))
  }

  /**
   * Replaces one source's own override table (idempotent; `{}` removes it): limits for the lanes of this source only,
   * over the installation's. 404 for a source that does not exist.
   */
  async putSourceLimits (name: string, limits: Record<string, LimitOverride>, now = new Date()): Promise<EgressSourceRecord> {
    invalid(limitsErrors(limits))
    const next = await this.mirror.modify(EGRESS_KEYS.source(name), (cur) => {
      if (!isSource(cur) || JSON.stringify(cur.limits ?? {}) === JSON.stringify(limits)) return undefined
      const { limits: _old, ...rest } = cur
      const updated = { ...rest, updated_at: now.toISOString() }
      return Object.keys(limits).length === 0 ? updated : { ...updated, limits }
    })
    if (!isSource(next)) throw new ApiError('not_found', `No source named ${name}.`)
    return next
  }

  /** Sets some keys of one provider's override of a source and removes others (the CLI's `limits set --source`). */
  async setSourceProviderLimits (name: string, provider: string, set: LimitOverride, unset: readonly string[]):
  Promise<EgressSourceRecord> {
    if (!isProviderKey(provider)) invalid([{ field: 'provider', message: 'is not a provider id, site or default' }])
    const source = this.source(name)
    if (source === undefined) throw new ApiError('not_found', `No source named ${name}.`)
    return await this.putSourceLimits(name, withEntry(source.limits ?? {}, provider, set, unset))
  }

  /** An organisation's pool; `null` (or `default`) puts it back on `default`. */
  async assignOrg (orgId: string, pool: string | null): Promise<OrgRecord> {
    this.assertAssignable(pool)
    return await this.organizations.setEgressPool(orgId, pool === null || pool === DEFAULT_POOL ? undefined : pool)
  }

  /** A domain's own pool, over its organisation's; `null` removes it (the organisation's applies). */
  async assignDomain (orgId: string, domainId: string, pool: string | null): Promise<DomainRecord> {
    if (this.orgs.get(orgId) === undefined) throw new ApiError('not_found', `No organisation with id ${orgId}.`)
    this.assertAssignable(pool)
    const next = await this.domains.modify(`${orgId}.${domainId}`, (cur) => {
      if ((cur.egress_pool ?? null) === pool) return undefined
      const { egress_pool: _old, ...rest } = cur
      return pool === null ? rest : { ...rest, egress_pool: pool }
    })
    if (next === undefined) throw new ApiError('not_found', `The organisation ${orgId} has no domain with id ${domainId}.`)
    return next
  }

  /**
   * A broadcast stream's own pool, over its domains' and organisation's; `null` removes it. The transactional stream
   * is never stored and has none (422): its mail leaves from the domain's or organisation's pool.
   */
  async assignStream (orgId: string, streamId: string, pool: string | null): Promise<StreamRecord> {
    if (this.orgs.get(orgId) === undefined) throw new ApiError('not_found', `No organisation with id ${orgId}.`)
    if (streamId === TRANSACTIONAL_STREAM) {
      throw new ApiError('unprocessable', 'The transactional stream has no pool of its own: assign one to the organisation or domain.')
    }
    this.assertAssignable(pool)
    const next = await this.streams.setEgressPool(orgId, streamId, pool ?? undefined)
    if (next === undefined) throw new ApiError('not_found', `The organisation ${orgId} has no stream with id ${streamId}.`)
    return next
  }

  private assertAssignable (pool: string | null): void {
    if (pool === null) return
    if (!isEgressName(pool)) throw ApiError.validation([{ field: 'pool', message: 'is not a pool name' }])
    if (this.pool(pool) === undefined) {
      throw new ApiError('unprocessable', `No pool named ${pool}; create it first.`, { field: 'pool', details: { pool } })
    }
  }

  /** Read-modify-write of a key that may not exist yet; `fn` returns undefined when nothing changes. */
  private async upsert (key: string, fn: (cur: EgressEntry | undefined) => EgressEntry | undefined): Promise<EgressEntry | undefined> {
    for (let attempt = 0; ; attempt++) {
      const cur = this.mirror.get(key)
      const revision = this.mirror.revision(key)
      const next = fn(cur)
      if (next === undefined) return cur
      try {
        if (revision === undefined) await this.mirror.create(key, next)
        else await this.mirror.update(key, next, revision)
        return next
      } catch (err) {
        if (!(err instanceof KvConflictError) || attempt === 4) throw err
        await this.mirror.sync(1000)
      }
    }
  }
}

function warmupOf (w: NonNullable<SourceInput['warmup']>, at: string): NonNullable<EgressSourceRecord['warmup']> {
  const started = w.started_at === undefined ? at : new Date(w.started_at).toISOString()
  return w.steps === undefined ? { started_at: started } : { started_at: started, steps: w.steps }
}

/** The table with one provider's entry changed: `set` keys over it, `unset` keys removed, an emptied entry gone. */
function withEntry (table: Record<string, LimitOverride>, provider: string, set: LimitOverride, unset: readonly string[]):
Record<string, LimitOverride> {
  const limits = { ...table }
  const entry: Record<string, unknown> = { ...limits[provider], ...set }
  for (const k of unset) delete entry[k]
  if (Object.keys(entry).length === 0) delete limits[provider]
  else limits[provider] = entry as LimitOverride
  return limits
}
