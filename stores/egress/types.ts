/** What a reply rule says about a lane (protocol/egress/reply_rules.ts). */
export type { ReplyAction } from '../../protocol/mod.ts'

/** Why a lane said wait: its rate, a pause or an out from a reply, the source's warm-up, or its connection cap. */
export type WaitReason = 'rate' | 'paused' | 'out' | 'warmup' | 'connections'

/** A gate's answer: go now (the send was counted), or wait `ms` before asking again. */
export type LaneGate = { kind: 'go' } | { kind: 'wait', ms: number, reason: WaitReason }

/**
 * A lane's reply-driven throttle. `factor` multiplies the lane's rate (1/64 ≤ factor ≤ 1); `pausedUntil` and
 * `outUntil` are epoch ms (0: never set); `changedAt` is when a reply last changed any of them, `reason` the rule
 * that did ('' for a lane no reply has touched).
 */
export interface LaneThrottle { factor: number, pausedUntil: number, outUntil: number, changedAt: number, reason: string }

/** One lane as operators see it. `oldestWaitingMs` is how long the longest-waiting message has waited (ms). */
export interface LaneSnapshot {
  lane: string
  source: string
  provider: string
  connections: number
  throttle: LaneThrottle
  waiting: number
  oldestWaitingMs: number | undefined
  warmup: { day: string, sentToday: number, hour: string, sentThisHour: number }
  /** Set when this read claimed recovery steps of the lane: the factor seen before them (the factor now is throttle's). */
  recoveredFrom?: number
}

export const GO: LaneGate = Object.freeze({ kind: 'go' })

/** A lane nothing has throttled, and what every throttle read answers while Redis is unreachable. */
export function clearThrottle (): LaneThrottle {
  return { factor: 1, pausedUntil: 0, outUntil: 0, changedAt: 0, reason: '' }
}

/**
 * Recovery steps of a slowed lane, claimed once across the cluster by the one reader that first saw them: its rate
 * factor went from `from` to `to` (one step per doubling; `to` 1: back at full rate).
 */
export interface LaneRecovery { lane: string, source: string, provider: string, from: number, to: number }

/** The doublings from one factor to another, each as the factor after it (0.25 → 1: [0.5, 1]). */
export function recoverySteps (from: number, to: number): number[] {
  const steps: number[] = []
  for (let f = from * 2; f <= to * 1.0001 && from > 0; f *= 2) steps.push(Math.min(1, f))
  return steps
}
