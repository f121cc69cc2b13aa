import type { Redis } from 'ioredis'
import type { ReputationCounts } from '../../protocol/mod.ts'

/**
 * The reputation windows in Redis, named in this file only (the one writer; docs/reputation.md). Per organisation:
 *   ob:rep:{<org>}:h:<stream>:<yyyymmddhh>   HASH delivered, hard_bounced, complained: live recipients counted in that
 *                                            UTC hour (when the projector applied the event)
 *   ob:rep:{<org>}:streams                   SET of the streams with counts in the window
 * Every key expires one hour after the window it can be part of has passed. The hash tag is the organisation, so one
 * script reads and writes all of an organisation's keys in a cluster too.
 */
export const REPUTATION_FIELDS = ['delivered', 'hard_bounced', 'complained'] as const
export type ReputationField = (typeof REPUTATION_FIELDS)[number]

const HOUR_MS = 3600_000

/** `yyyymmddhh` of the UTC hour containing `ms` (the read model's stats hours read the same). */
function hourOf (ms: number): string {
  return new Date(ms).toISOString().slice(0, 13).replace(/[-T]/g, '')
}

const hourKey = (org: string, stream: string, hour: string): string => `ob:rep:{${org}}:h:${stream}:${hour}`
const streamsKey = (org: string): string => `ob:rep:{${org}}:streams`

/**
 * Adds one to a field of the current hour and answers the window's sums, in one script (one round trip, auto-pipelined
 * with the projector's other writes). KEYS[1] streams set, KEYS[2] the current hour, KEYS[3..] the window's earlier
 * hours; ARGV[1] field ('' adds nothing), ARGV[2] ttl ms, ARGV[3] stream.
 */
const COUNT_LUA = `
local ttl = ARGV[2]
if ARGV[1] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('SADD', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ttl)
end
local d, b, c = 0, 0, 0
for i = 2, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 'delivered', 'hard_bounced', 'complained')
  d = d + tonumber(v[1] or '0')
  b = b + tonumber(v[2] or '0')
  c = c + tonumber(v[3] or '0')
end
return {d, b, c}
`

interface WindowRedis { ob_reputation_count: (numKeys: number, ...args: Array<string | number>) => Promise<number[]> }

export class ReputationWindow {
  private readonly r: WindowRedis

  constructor (private readonly redis: Redis, private readonly windowHours: number, private readonly now: () => number = Date.now) {
    const r = redis as unknown as WindowRedis
    if (typeof (r as Partial<WindowRedis>).ob_reputation_count !== 'function') {
      redis.defineCommand('ob_reputation_count', { lua: COUNT_LUA })
    }
    this.r = r
  }

  private keys (org: string, stream: string): string[] {
    const now = this.now()
    const hours: string[] = []
    for (let i = 0; i < this.windowHours; i++) hours.push(hourKey(org, stream, hourOf(now - i * HOUR_MS)))
    return [streamsKey(org), ...hours]
  }

  /** Counts one live recipient outcome and answers the window as it stands after it. */
  async count (org: string, stream: string, field: ReputationField): Promise<ReputationCounts> {
    return await this.run(org, stream, field)
  }

  /** The window of one stream. */
  async read (org: string, stream: string): Promise<ReputationCounts> {
    return await this.run(org, stream, '')
  }

  /** The streams with counts in the window, by name. */
  async streams (org: string): Promise<string[]> {
    return (await this.redis.smembers(streamsKey(org))).sort()
  }

  /**
   * Empties the stream's window: on resume, so the stream must reach the minimum volume again before it can pause
   * again, instead of tripping at the next event on the counts that paused it.
   */
  async reset (org: string, stream: string): Promise<void> {
    const [, ...hours] = this.keys(org, stream)
    await this.redis.del(...hours)
  }

  private async run (org: string, stream: string, field: ReputationField | ''): Promise<ReputationCounts> {
    const keys = this.keys(org, stream)
    const ttlMs = (this.windowHours + 1) * HOUR_MS
    const [d, b, c] = await this.r.ob_reputation_count(keys.length, ...keys, field, ttlMs, stream)
    return { delivered: d ?? 0, hard_bounced: b ?? 0, complained: c ?? 0 }
  }
}
