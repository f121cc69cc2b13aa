/**
 * The arithmetic of the rate-limit benchmark, kept pure so it can be tested. A GCRA bucket with
 * burst = the per-minute limit lets a fresh key make `limit` requests at once and then `limit` per minute,
 * so over a window of D seconds it allows `limit + limit × D / 60`.
 */
export interface KeyTally {
  plan: string
  limit: number
  sent: number
  allowed: number
  limited: number
  /** 429s without an integer `error.retry_after` ≥ 1 or without a `Retry-After` header. */
  badRetry: number
  /** 200s whose RateLimit-Limit header is not the plan value. */
  badLimitHeader: number
  other: number
  firstAt: number
  lastAt: number
}

export const TOLERANCE = 0.02

export function expectedAllowed (limit: number, durationS: number): number {
  return limit + limit * durationS / 60
}

/** ±2 %, but never less than 2 requests: the first and last request of a window may fall either side of an emission. */
export function allowance (expected: number): number {
  return Math.max(expected * TOLERANCE, 2)
}

export type Verdict = 'ok' | 'over' | 'starved' | 'underdriven'

export interface KeyJudgement { expected: number, ratio: number, steadyPerMinute: number, offeredRatio: number, verdict: Verdict }

/**
 * `over`: the key got more than its plan allows (the limit is not enforced). `starved`: it was driven well
 * above its limit yet got less than its share. `underdriven`: the client did not send enough to tell.
 */
export function judgeKey (t: KeyTally, minOffered = 1.3): KeyJudgement {
  const durationS = Math.max(0, (t.lastAt - t.firstAt) / 1000)
  const expected = expectedAllowed(t.limit, durationS)
  const ratio = t.allowed / expected
  const steadyPerMinute = durationS > 0 ? (t.allowed - t.limit) / durationS * 60 : 0
  const offeredRatio = t.sent / expected
  let verdict: Verdict = 'ok'
  if (t.allowed > expected + allowance(expected)) verdict = 'over'
  else if (offeredRatio < minOffered) verdict = 'underdriven'
  else if (t.allowed < expected - allowance(expected)) verdict = 'starved'
  return { expected, ratio, steadyPerMinute, offeredRatio, verdict }
}

/** Smooth weighted round robin: each index appears `weights[i]` times per cycle, evenly spread. */
export function weightedSchedule (weights: readonly number[]): number[] {
  const total = weights.reduce((a, b) => a + b, 0)
  const current = weights.map(() => 0)
  const out: number[] = []
  for (let n = 0; n < total; n++) {
    let best = 0
    for (let i = 0; i < weights.length; i++) {
      current[i]! += weights[i]!
      if (current[i]! > current[best]!) best = i
    }
    current[best]! -= total
    out.push(best)
  }
  return out
}
