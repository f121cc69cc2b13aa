import { createHash } from 'node:crypto'

/**
 * The egress keys in Redis, named in this file only. A lane's keys carry its id between braces, a Redis Cluster
 * hash tag, so every key of one lane lives in one slot and a script may touch several of them:
 *   ob:eg:conn:{lane}               ZSET holder → expiry (epoch ms): connections held cluster-wide
 *   ob:eg:rate:{lane}:<perMinute>   GCRA theoretical arrival time (epoch ms); the key names its limit
 *   ob:eg:thr:{lane}                HASH factor, paused_until, out_until, changed_at, reason, slowed_at
 *   ob:eg:wu:{lane}:<yyyymmdd>      warm-up count of the UTC day
 *   ob:eg:wu:{lane}:<yyyymmddhh>    warm-up count of the UTC hour
 *   ob:eg:wait:{lane}               ZSET message id → when it first waited (epoch ms)
 *   ob:eg:lanes                     ZSET lane → last seen (epoch ms), at most MAX_INDEXED_LANES members
 *
 * Lane ids are built from DNS names (a site's MX hosts), so they are untrusted: normalizeLane lower-cases them,
 * replaces anything but printable ASCII and the hash-tag braces, and caps their length. They appear only in key
 * names and as members of the lane index, never in script text.
 */
export const LANES_KEY = 'ob:eg:lanes'

/** Longest lane id kept as it is; a longer one keeps its start and ends in a digest of the whole. */
export const MAX_LANE_ID_LENGTH = 200
/** Longest member (connection holder, message id) stored as it is. */
export const MAX_MEMBER_LENGTH = 200

const DIGEST_CHARS = 16

function capped (s: string, max: number): string {
  if (s.length <= max) return s
  const digest = createHash('sha256').update(s).digest('hex').slice(0, DIGEST_CHARS)
  return `${s.slice(0, max - DIGEST_CHARS - 1)}~${digest}`
}

/** The lane id as keys name it: the same for every process that is given the same source and provider. */
export function normalizeLane (lane: string): string {
  return capped(lane.toLowerCase().replace(/[^\x21-\x7e]|[{}]/g, '_'), MAX_LANE_ID_LENGTH)
}

/** A holder or message id as a ZSET member. */
export function normalizeMember (member: string): string {
  return capped(member, MAX_MEMBER_LENGTH)
}

/** `<source>|<provider>`, normalized. */
export function laneId (source: string, provider: string): string {
  return normalizeLane(`${source}|${provider}`)
}

/** The parts of a lane id: source names hold no `|`, so the first one separates them. */
export function parseLane (lane: string): { source: string, provider: string } {
  const at = lane.indexOf('|')
  return at < 0 ? { source: lane, provider: '' } : { source: lane.slice(0, at), provider: lane.slice(at + 1) }
}

// Each takes a normalized lane id.
export const connKey = (lane: string): string => `ob:eg:conn:{${lane}}`
export const rateKey = (lane: string, perMinute: number): string => `ob:eg:rate:{${lane}}:${perMinute}`
export const throttleKey = (lane: string): string => `ob:eg:thr:{${lane}}`
export const waitKey = (lane: string): string => `ob:eg:wait:{${lane}}`
export const warmupKey = (lane: string, period: string): string => `ob:eg:wu:{${lane}}:${period}`

/** The UTC day and hour that warm-up counts fall in at `now`, and how long until each ends. */
export interface WarmupPeriod { day: string, hour: string, msToNextDay: number, msToNextHour: number }

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

export function warmupPeriod (now: number): WarmupPeriod {
  const iso = new Date(now).toISOString() // 2026-11-28T13:05:09.123Z
  const day = iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10)
  return {
    day,
    hour: day + iso.slice(11, 13),
    msToNextDay: DAY_MS - (now % DAY_MS),
    msToNextHour: HOUR_MS - (now % HOUR_MS)
  }
}
