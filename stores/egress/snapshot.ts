import { LANES_KEY, connKey, parseLane, throttleKey, waitKey, warmupKey, warmupPeriod } from './keys.ts'
import type { EgressPipeline, EgressRedis } from './scripts.ts'
import type { LaneSnapshot, LaneThrottle } from './types.ts'

/** The most lanes the index keeps (the lanes seen longest ago leave first), and so the most a snapshot lists. */
export const MAX_INDEXED_LANES = 10_000

/** A throttle as the scripts answer it: factor, paused_until, out_until, changed_at, reason. */
export function throttleFrom (fields: readonly unknown[]): LaneThrottle {
  return {
    factor: Number(fields[0]),
    pausedUntil: Number(fields[1]),
    outUntil: Number(fields[2]),
    changedAt: Number(fields[3]),
    reason: String(fields[4] ?? '')
  }
}

/**
 * Every indexed lane, read in one pipeline after the index itself: two round trips whatever the number of lanes.
 * Warm-up counts are those of the UTC day and hour at `now`. Sorted by lane id. Rejects when Redis does not answer.
 * `claim` '1': each lane's script claims the recovery steps it took (`recoveredFrom`: the factor seen before).
 */
export async function readSnapshot (
  redis: EgressRedis, now: number, recoverEveryMs: number, waitingMaxAgeMs: number, claim: '0' | '1' = '0'
): Promise<LaneSnapshot[]> {
  const lanes = (await redis.zrevrange(LANES_KEY, 0, MAX_INDEXED_LANES - 1)).sort()
  if (lanes.length === 0) return []
  const period = warmupPeriod(now)
  const pipe = redis.pipeline() as EgressPipeline
  for (const lane of lanes) {
    pipe.ob_eg_view(
      connKey(lane), throttleKey(lane), waitKey(lane), warmupKey(lane, period.day), warmupKey(lane, period.hour),
      recoverEveryMs, waitingMaxAgeMs, claim
    )
  }
  const results = await pipe.exec()
  if (results === null) throw new Error('the egress snapshot pipeline was discarded')
  return lanes.map((lane, i) => {
    const [err, reply] = results[i]!
    if (err !== null) throw err
    const r = reply as unknown[]
    const oldest = r[7] === '' ? undefined : Number(r[7])
    const redisNow = Number(r[10])
    return {
      lane,
      ...parseLane(lane),
      connections: Number(r[0]),
      throttle: throttleFrom(r.slice(1, 6)),
      waiting: Number(r[6]),
      oldestWaitingMs: oldest === undefined ? undefined : Math.max(0, redisNow - oldest),
      warmup: { day: period.day, sentToday: Number(r[8]), hour: period.hour, sentThisHour: Number(r[9]) },
      ...(Number(r[11] ?? 0) > 0 ? { recoveredFrom: Number(r[11]) } : {})
    }
  })
}
