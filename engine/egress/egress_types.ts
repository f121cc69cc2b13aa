import type { LaneGate } from '../../stores/egress/mod.ts'

export { limitsFor, warmupAllowance, type LaneLimits, type LimitOverrides, type WarmupStep } from '../../protocol/mod.ts'
export type { LaneGate } from '../../stores/egress/mod.ts'

/** What the router and the lane sockets need of the egress state (stores/egress EgressState). */
export interface EgressGates {
  takeSend: (lane: string, perMinute: number) => Promise<LaneGate>
  refundSend: (lane: string, perMinute: number) => Promise<void>
  takeWarmup: (source: string, provider: string, allowance: { perDay: number, perHour: number }) => Promise<LaneGate>
  refundWarmup: (source: string, provider: string) => Promise<void>
  acquireConnection: (lane: string, holder: string, max: number, ttlMs: number) => Promise<boolean>
  renewConnections: (held: ReadonlyArray<{ lane: string, holder: string }>, ttlMs: number) => Promise<void>
  releaseConnection: (lane: string, holder: string) => Promise<void>
}
