import type { Logger } from 'pino'
import { recoverySteps, type LaneRecovery } from '../../stores/egress/mod.ts'
import type { OutboxMetrics } from '../../stores/metrics/mod.ts'

/**
 * Recovery steps of slowed lanes, made visible: one count of `outbox_egress_lane_recoveries_total{step}` and one log
 * line per step (the rate doubled, or back at full rate). Each step reaches here once across the cluster: the engine
 * thread or lane reader whose Redis script first saw it claimed it (stores/egress claim_recovery). A lane nobody
 * used while it recovered claims its steps together, each still counted and logged on its own.
 */
export function reportRecovery (metrics: OutboxMetrics, log: Logger, r: LaneRecovery): void {
  for (const factor of recoverySteps(r.from, r.to)) {
    const full = factor >= 1
    metrics.egressLaneRecoveries[full ? 'full' : 'doubled'].inc()
    log.info({ source: r.source, provider: r.provider, rate_factor: factor },
      full ? 'egress lane back at full rate' : 'egress lane recovering: rate doubled')
  }
}
