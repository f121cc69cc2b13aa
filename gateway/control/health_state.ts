import type { Redis } from 'ioredis'
import type { DomainHealth, HealthSnapshot } from '../../protocol/mod.ts'

/**
 * The one owner of the domain-health keys in Redis (`ob:dh:*`):
 * - `ob:dh:live:<domain id>`: the last check's answer, kept LIVE_CACHE_MS, so repeated requests cost no look-up;
 * - `ob:dh:rate:<org id>:<minute>`: live checks an organisation started in that minute (LIVE_CHECKS_PER_MINUTE);
 * - `ob:dh:state` (hash, field = domain id): what the periodic check saw last, to tell a change for the worse;
 * - `ob:dh:lease`: held by the process running this period's round, so one runs per cluster and period.
 */

/** A live answer is reused this long: DNS answers are themselves cached for minutes, so a fresher check tells little. */
export const LIVE_CACHE_MS = 60_000
/** Live checks (not answered from the cache) one organisation may start per minute, across the cluster. */
export const LIVE_CHECKS_PER_MINUTE = 10
const MINUTE_MS = 60_000
const STATE_KEY = 'ob:dh:state'
const LEASE_KEY = 'ob:dh:lease'
const liveKey = (domainId: string): string => `ob:dh:live:${domainId}`

export class HealthStore {
  constructor (private readonly redis: Redis) {}

  async cached (domainId: string): Promise<DomainHealth | undefined> {
    const raw = await this.redis.get(liveKey(domainId))
    return raw === null ? undefined : JSON.parse(raw) as DomainHealth
  }

  async keep (health: DomainHealth): Promise<void> {
    await this.redis.set(liveKey(health.domain_id), JSON.stringify(health), 'PX', LIVE_CACHE_MS)
  }

  /**
   * Counts one live check of the organisation in the current minute: undefined when it may run, else the seconds
   * until the next minute, when it may.
   */
  async takeLiveCheck (orgId: string, nowMs: number): Promise<number | undefined> {
    const minute = Math.floor(nowMs / MINUTE_MS)
    const key = `ob:dh:rate:${orgId}:${minute}`
    const [[, count]] = await this.redis.multi().incr(key).pexpire(key, 2 * MINUTE_MS).exec() as unknown as [[unknown, number], unknown]
    if (count <= LIVE_CHECKS_PER_MINUTE) return undefined
    return Math.max(1, Math.ceil(((minute + 1) * MINUTE_MS - nowMs) / 1000))
  }

  async snapshot (domainId: string): Promise<HealthSnapshot | undefined> {
    const raw = await this.redis.hget(STATE_KEY, domainId)
    return raw === null ? undefined : JSON.parse(raw) as HealthSnapshot
  }

  async saveSnapshot (domainId: string, snapshot: HealthSnapshot): Promise<void> {
    await this.redis.hset(STATE_KEY, domainId, JSON.stringify(snapshot))
  }

  /** Forgets the snapshots of domains that no longer exist (or are no longer verified). */
  async keepOnly (domainIds: ReadonlySet<string>): Promise<void> {
    const gone = (await this.redis.hkeys(STATE_KEY)).filter((id) => !domainIds.has(id))
    if (gone.length > 0) await this.redis.hdel(STATE_KEY, ...gone)
  }

  /** Takes this period's lease; false when another process holds it (it runs the round). */
  async takeLease (holder: string, periodMs: number): Promise<boolean> {
    return await this.redis.set(LEASE_KEY, holder, 'PX', periodMs, 'NX') === 'OK'
  }
}
