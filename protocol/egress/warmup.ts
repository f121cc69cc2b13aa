/**
 * Warm-up: a new source sends little to each provider at first and more each day, because providers judge an
 * address with no history by its first weeks (Google's and Yahoo's sender guidelines: increase volume slowly; Microsoft
 * throttles an address that "changed its previous sending patterns", 451 4.7.500). Each provider (and each site)
 * is counted separately: a day-3 source may send 200 messages to Google AND 200 to Microsoft.
 *
 * Days are UTC calendar days: day 1 is the UTC day the source's warm-up started (however late in it), day 2 the
 * next UTC day, and so on. They are the same days the store's counters are kept by (`…:<yyyymmdd>`, `…:<yyyymmddhh>`
 * in UTC), so a day's allowance is checked against that day's count only; with days counted in 24-hour periods from
 * the start, a step changing in the middle of a counter's day would let a lane send two days' allowance in one.
 * A source started late in a UTC day gets less of day 1; that is the conservative side.
 */
export interface WarmupStep {
  /** First day (1-based UTC calendar day since the start) this step applies; it lasts until the next step's day. */
  day: number
  /** Messages per UTC day, from this source to one provider. */
  perDay: number
  /** Messages per UTC clock hour, from this source to one provider. */
  perHour: number
}

export const DAY_MS = 86_400_000

/**
 * A day's allowance may go out in 12 hours rather than 24, since transactional mail comes in bursts in working
 * hours, but never in one; at least 10 an hour so a quiet day's few messages are not held back for hours.
 */
function step (day: number, perDay: number): WarmupStep {
  return Object.freeze({ day, perDay, perHour: Math.max(10, Math.ceil(perDay / 12)) })
}

/**
 * The default curve, per provider: 50 on day 1 and 100 on day 2, where SendGrid's recommended warm-up schedule starts
 * too, then roughly doubling daily to day 5 and growing about 1.3 to 1.5 times every two days, to 100,000 a day on
 * day 30; warm-up is complete from day 31. For comparison, for ALL of an address's mail: SendGrid's automated
 * warm-up allows 20 an hour on its first day and 1.4 times more each day over 41 days; Amazon SES's standard
 * automatic warm-up takes about 45 days. Counting each provider separately reaches the same volume sooner.
 */
export const DEFAULT_WARMUP: readonly WarmupStep[] = Object.freeze([
  step(1, 50),
  step(2, 100),
  step(3, 200),
  step(4, 400),
  step(5, 700),
  step(6, 1000),
  step(7, 1500),
  step(8, 2000),
  step(10, 3000),
  step(12, 5000),
  step(14, 7500),
  step(16, 10_000),
  step(18, 15_000),
  step(20, 20_000),
  step(22, 30_000),
  step(24, 40_000),
  step(26, 50_000),
  step(28, 75_000),
  step(30, 100_000)
])

/** The UTC calendar day (1-based) of `nowMs` in a warm-up started at `startedAtMs`; day 1 before the start (clock skew). */
export function warmupDay (startedAtMs: number, nowMs: number): number {
  return Math.max(1, Math.floor(nowMs / DAY_MS) - Math.floor(startedAtMs / DAY_MS) + 1)
}

/**
 * The allowance in force at `nowMs` for one source and one provider: the last step whose day has come. Undefined
 * once the curve is complete (the day after the last step's day: the last step lasts one day), when `steps` is
 * empty, or when `startedAtMs` is not a number (no warm-up): then only the lane's limits apply.
 */
export function warmupAllowance (
  startedAtMs: number, nowMs: number, steps: readonly WarmupStep[] = DEFAULT_WARMUP
): { day: number, perDay: number, perHour: number } | undefined {
  if (!Number.isFinite(startedAtMs) || !Number.isFinite(nowMs) || steps.length === 0) return undefined
  const day = warmupDay(startedAtMs, nowMs)
  const last = steps[steps.length - 1]
  if (last === undefined || day > last.day) return undefined
  let current = steps[0]
  for (const s of steps) if (s.day <= day) current = s
  if (current === undefined) return undefined
  return { day, perDay: current.perDay, perHour: current.perHour }
}

/** Largest accepted values: past them a curve is a typo (a warm-up longer than a year is not a warm-up). */
export const WARMUP_MAXIMA = Object.freeze({ steps: 366, day: 366, perDay: 10_000_000 })
