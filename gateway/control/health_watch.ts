import { randomUUID } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../../config/mod.ts'
import {
  ApiError, eventId, eventRecord, nextSnapshot, snapshotStatus, worsenedItems, type DomainHealth, type DomainRecord
} from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'
import type { JsPublish } from '../../stores/clients/mod.ts'
import { publishEvent } from '../../stores/events/mod.ts'
import { checkDomainHealth, type HealthCheckDeps } from './domain_health.ts'
import { healthDns, type HealthDns } from './health_lookups.ts'
import { HealthStore } from './health_state.ts'

/** Domains checked at once by the periodic round (their look-ups share the process's bound as well). */
const ROUND_CONCURRENCY = 4
/** A process asks for the lease at least this often, so a round starts at most this late after its period. */
const MAX_TICK_MS = 60_000

export interface DomainHealthOptions {
  readonly config: Config
  readonly cp: ControlPlane
  readonly redis: Redis
  readonly js: JsPublish
  readonly log: Logger
  /** Tests pass a table; otherwise look-ups go to OB_DNS_SERVERS or the system's resolvers. */
  readonly dns?: HealthDns
  /** The clock of checks and rounds (tests move it). */
  readonly now?: () => Date
}

/**
 * Domain health: the live check behind `GET /v1/domains/{id}/health` (answered from a minute's cache, and limited per
 * organisation), and the periodic round. Every gateway process ticks; the one that takes the period's lease checks
 * every verified domain, compares each with what the round before saw, and publishes `domain.health_changed` for a
 * domain some item of which got worse. An item that stays bad is not reported again; one that could not be checked
 * keeps its last status.
 */
export class DomainHealthService {
  private readonly store: HealthStore
  private readonly dns: HealthDns
  private readonly now: () => Date
  private readonly holder = randomUUID()
  private timer?: NodeJS.Timeout
  private running?: Promise<number>

  constructor (private readonly o: DomainHealthOptions) {
    this.store = new HealthStore(o.redis)
    this.dns = o.dns ?? healthDns(o.config.dnsServers)
    this.now = o.now ?? (() => new Date())
  }

  private get checkDeps (): HealthCheckDeps {
    return { config: this.o.config, cp: this.o.cp, dns: this.dns }
  }

  private get zones (): readonly string[] {
    return this.o.config.domainHealth.dnsblZones
  }

  /** The domain's health: the cached answer when it is under a minute old, else a live check (429 past the limit). */
  async live (domain: DomainRecord): Promise<DomainHealth> {
    const cached = await this.store.cached(domain.id)
    if (cached !== undefined) return cached
    const now = this.now()
    const wait = await this.store.takeLiveCheck(domain.org_id, now.getTime())
    if (wait !== undefined) {
      throw new ApiError('rate_limited', 'Too many live domain health checks for this organisation; answers are cached for a minute.', {
        retryAfter: wait
      })
    }
    const health = await checkDomainHealth(this.checkDeps, domain, this.zones, now)
    await this.store.keep(health)
    return health
  }

  /** Starts ticking: each tick asks for the lease of the period (OB_DOMAIN_HEALTH_INTERVAL_MS) and runs the round if it gets it. */
  start (): void {
    const period = this.o.config.domainHealth.intervalMs
    this.timer = setInterval(() => { void this.tick(period) }, Math.min(period, MAX_TICK_MS))
    this.timer.unref()
  }

  private async tick (period: number): Promise<void> {
    if (this.running !== undefined) return
    try {
      if (!await this.store.takeLease(this.holder, period)) return
      await this.round()
    } catch (err) {
      this.o.log.warn({ err }, 'domain health round failed; the next period tries again')
    }
  }

  /** Checks every verified domain once; resolves to the number of `domain.health_changed` events published. */
  async round (): Promise<number> {
    this.running ??= this.checkAll().finally(() => { this.running = undefined })
    return await this.running
  }

  private async checkAll (): Promise<number> {
    const domains = this.o.cp.domains.list().filter((d) => d.status === 'verified')
    await this.store.keepOnly(new Set(domains.map((d) => d.id)))
    let published = 0
    let next = 0
    const worker = async (): Promise<void> => {
      while (next < domains.length) {
        const domain = domains[next++]!
        try {
          if (await this.checkOne(domain)) published++
        } catch (err) {
          this.o.log.warn({ err, domain_id: domain.id }, 'domain health check failed; checked again next period')
        }
      }
    }
    await Promise.all(Array.from({ length: Math.min(ROUND_CONCURRENCY, domains.length) }, worker))
    return published
  }

  private async checkOne (domain: DomainRecord): Promise<boolean> {
    const health = await checkDomainHealth(this.checkDeps, domain, this.zones, this.now())
    const previous = await this.store.snapshot(domain.id)
    const worsened = worsenedItems(previous, health.items)
    if (worsened.length > 0) {
      const data = {
        domain_id: domain.id,
        domain: domain.name,
        status: health.status,
        previous_status: snapshotStatus(previous ?? {}),
        checked_at: health.checked_at,
        worsened
      }
      const id = eventId('domain.health_changed', domain.id, health.checked_at)
      // published before the snapshot is saved: should the publish fail, the next round finds the same change
      await publishEvent(this.o.js, eventRecord(
        id, 'domain.health_changed', domain.org_id, data, undefined, health.checked_at, 'live', domain.name
      ))
    }
    await this.store.saveSnapshot(domain.id, nextSnapshot(previous, health.items))
    return worsened.length > 0
  }

  /** Stops ticking and waits for a round under way. */
  async stop (): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer)
    await this.running?.catch(() => {})
  }
}
