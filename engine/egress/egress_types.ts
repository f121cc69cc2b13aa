// Placeholder surfaces of protocol/egress and stores/egress, replaced by imports when they land.
export interface LaneLimits { maxConnections: number, messagesPerConnection: number, messagesPerMinute: number, tls: 'opportunistic' | 'required' }
export type LimitOverrides = Readonly<Record<string, Partial<LaneLimits>>>
export interface WarmupStep { day: number, perDay: number, perHour: number }
export declare function limitsFor (provider: string, overrides?: LimitOverrides): LaneLimits
export declare function warmupAllowance (startedAtMs: number, nowMs: number, steps?: readonly WarmupStep[]):
{ day: number, perDay: number, perHour: number } | undefined
export type LaneGate = { kind: 'go' } | { kind: 'wait', ms: number, reason: 'rate' | 'paused' | 'out' | 'warmup' | 'connections' }
export interface EgressGates {
  takeSend: (lane: string, perMinute: number) => Promise<LaneGate>
  takeWarmup: (source: string, provider: string, allowance: { perDay: number, perHour: number }) => Promise<LaneGate>
  refundWarmup: (source: string, provider: string) => Promise<void>
  acquireConnection: (lane: string, holder: string, max: number, ttlMs: number) => Promise<boolean>
  renewConnections: (held: ReadonlyArray<{ lane: string, holder: string }>, ttlMs: number) => Promise<void>
  releaseConnection: (lane: string, holder: string) => Promise<void>
}
