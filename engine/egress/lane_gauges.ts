import type { Logger } from 'pino'
import { isKnownProvider } from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'
import { laneViews, type EgressState, type LaneView } from '../../stores/egress/mod.ts'
import type { OutboxMetrics } from '../../stores/metrics/mod.ts'

/** How often the lanes are read from Redis for /metrics: a scrape never waits on Redis. */
const READ_EVERY_MS = 15_000

/**
 * The egress lanes on /metrics, read from the state every engine shares (the same figures from each engine: take
 * max(), not sum(), across them). A lane toward a provider Outbox knows has its own series; the many small sites are
 * summed into provider="other" (connections and waiting mail only), so the number of series stays bounded.
 */
export class LaneGauges {
  private views: LaneView[] = []
  private readonly timer: NodeJS.Timeout

  constructor (
    private readonly state: EgressState, private readonly cp: ControlPlane, metrics: OutboxMetrics, private readonly log: Logger
  ) {
    this.timer = setInterval(() => { void this.read() }, READ_EVERY_MS)
    this.timer.unref()
    void this.read()
    const each = (name: string, value: (v: LaneView) => number | undefined, sites: boolean): void => {
      metrics.read(name, (set) => {
        const other = new Map<string, number>()
        for (const v of this.views) {
          const n = value(v)
          if (n === undefined) continue
          if (isKnownProvider(v.provider)) set(n, { source: v.source, provider: v.provider })
          else if (sites) other.set(v.source, (other.get(v.source) ?? 0) + n)
        }
        for (const [source, n] of other) set(n, { source, provider: 'other' })
      })
    }
    each('outbox_egress_lane_connections', (v) => v.connections, true)
    each('outbox_egress_lane_waiting', (v) => v.waiting.messages, true)
    each('outbox_egress_lane_messages_per_minute', (v) => v.messages_per_minute_now, false)
    each('outbox_egress_lane_rate_factor', (v) => v.throttle.factor, false)
    each('outbox_egress_lane_stopped', (v) => (v.throttle.paused_until !== null || v.throttle.out_until !== null ? 1 : 0), false)
    each('outbox_egress_lane_oldest_waiting_seconds', (v) => v.waiting.oldest_seconds ?? undefined, false)
    each('outbox_egress_warmup_sent_today', (v) => v.warmup?.sent_today, false)
    each('outbox_egress_warmup_allowance_today', (v) => v.warmup?.per_day, false)
  }

  private async read (): Promise<void> {
    try {
      this.views = await laneViews(this.state, (name) => this.cp.egress.source(name), this.cp.egress.settings())
    } catch (err) {
      // the figures of the last read stay; Redis being away is reported by outbox_redis_connected
      this.log.debug({ err }, 'egress lanes not read for metrics')
    }
  }

  close (): void {
    clearInterval(this.timer)
  }
}
