import type { Redis } from 'ioredis'
import type { ReputationCounts } from '../../protocol/mod.ts'
import { hourBucket } from '../read_model/mod.ts'

/**
 * The reputation windows in Redis, named in this file only (the one writer; docs/reputation.md). Per organisation:
 *   ob:rep:{<org>}:h:<stream>:<yyyymmddhh>   HASH delivered, hard_bounced, complained: live recipients counted in that
 *                                            UTC hour (when the projector applied the event)
 *   ob:rep:{<org>}:e:<stream>:<yyyymmddhh>   HASH the same fields summed over the window's hours before that hour,
 *                                            added up at the hour's first count and kept for it
 *   ob:rep:{<org>}:streams                   SET of the streams with counts in the window
 * Every key expires one hour after the window it can be part of has passed. The hash tag is the organisation, so one
 * script reads and writes all of an organisation's keys in a cluster too.
 */
export const REPUTATION_FIELDS = ['delivered', 'hard_bounced', 'complained'] as const
export type ReputationField = (typeof REPUTATION_FIELDS)[number]

const HOUR_MS = 3600_000

const hourKey = (org: string, stream: string, hour: string): string => `ob:rep:{${org}}:h:${stream}:${hour}`
const streamsKey = (org: string): string => `ob:rep:{${org}}:streams`
/** The sums of the window's earlier hours, kept for the current hour: they no longer change once their hour is over. */
const earlierKey = (org: string, stream: string, hour: string): string => `ob:rep:{${org}}:e:${stream}:${hour}`

/**
 * Adds one to a field of the current hour and answers the current hour's counts with the earlier hours' sums, in one
 * script (one round trip, auto-pipelined with the projector's other writes). KEYS[1] streams set, KEYS[2] the current
 * hour, KEYS[3] the earlier hours' sums; ARGV[1] field ('' adds nothing), ARGV[2] ttl ms, ARGV[3] stream. The sums
 * are -1 when not kept yet (the first count of an hour, or after a reset): SUM_LUA then adds the hours up once.
 */
const COUNT_LUA = `
local ttl = ARGV[2]
if ARGV[1] ~= '' then
  redis.call('HINCRBY', KEYS[2], ARGV[1], 1)
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('SADD', KEYS[1], ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ttl)
end
local v = redis.call('HMGET', KEYS[2], 'delivered', 'hard_bounced', 'complained')
local e = redis.call('HMGET', KEYS[3], 'delivered', 'hard_bounced', 'complained')
if not e[1] then
  return {tonumber(v[1] or '0'), tonumber(v[2] or '0'), tonumber(v[3] or '0'), -1, -1, -1}
end
return {tonumber(v[1] or '0'), tonumber(v[2] or '0'), tonumber(v[3] or '0'), tonumber(e[1]), tonumber(e[2]), tonumber(e[3])}
`

/**
 * Adds up the window's earlier hours and keeps the sums for the current hour. KEYS[1] the sums, KEYS[2..] the earlier
 * hours; ARGV[1] ttl ms.
 */
const SUM_LUA = `
local d, b, c = 0, 0, 0
for i = 2, #KEYS do
  local v = redis.call('HMGET', KEYS[i], 'delivered', 'hard_bounced', 'complained')
  d = d + tonumber(v[1] or '0')
  b = b + tonumber(v[2] or '0')
  c = c + tonumber(v[3] or '0')
end
redis.call('HSET', KEYS[1], 'delivered', d, 'hard_bounced', b, 'complained', c)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return {d, b, c}
`

interface WindowRedis {
  ob_reputation_count: (numKeys: number, ...args: Array<string | number>) => Promise<number[]>
  ob_reputation_sum: (numKeys: number, ...args: Array<string | number>) => Promise<number[]>
}

/** The hours of the window at one moment: the current one and the earlier ones, newest first. */
interface WindowHours { index: number, current: string, earlier: string[] }

/**
 * A window's counts are the current hour's plus the sums of its earlier hours, which are added up once per hour and
 * kept (the `e` key): a count reads three keys whatever the window's length, instead of every hour of it. An earlier
 * hour no longer changes once it is over, except on a host whose clock is behind: its last counts of an hour that
 * the others have left are missing from their sums until that hour leaves the window.
 */
export class ReputationWindow {
  private readonly r: WindowRedis
  private hours: WindowHours = { index: Number.NaN, current: '', earlier: [] }

  constructor (private readonly redis: Redis, private readonly windowHours: number, private readonly now: () => number = Date.now) {
    const r = redis as unknown as WindowRedis
    if (typeof (r as Partial<WindowRedis>).ob_reputation_count !== 'function') {
      redis.defineCommand('ob_reputation_count', { lua: COUNT_LUA })
      redis.defineCommand('ob_reputation_sum', { lua: SUM_LUA })
    }
    this.r = r
  }

  /** The window's hours (`yyyymmddhh`, as the read model's stats hours), worked out once per hour. */
  private windowAt (): WindowHours {
    const now = this.now()
    const index = Math.floor(now / HOUR_MS)
    if (index !== this.hours.index) {
      const earlier: string[] = []
      for (let i = 1; i < this.windowHours; i++) earlier.push(hourBucket(now - i * HOUR_MS))
      this.hours = { index, current: hourBucket(now), earlier }
    }
    return this.hours
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
    const { current, earlier } = this.windowAt()
    await this.redis.del(earlierKey(org, stream, current), hourKey(org, stream, current), ...earlier.map((h) => hourKey(org, stream, h)))
  }

  private async run (org: string, stream: string, field: ReputationField | ''): Promise<ReputationCounts> {
    const { current, earlier } = this.windowAt()
    const ttlMs = (this.windowHours + 1) * HOUR_MS
    const sums = earlierKey(org, stream, current)
    const [d = 0, b = 0, c = 0, ed, eb, ec] =
      await this.r.ob_reputation_count(3, streamsKey(org), hourKey(org, stream, current), sums, field, ttlMs, stream)
    if (ed !== -1 && ed !== undefined) return { delivered: d + ed, hard_bounced: b + (eb ?? 0), complained: c + (ec ?? 0) }
    // kept for two hours: past its own hour nothing asks for it
    const hours = earlier.map((h) => hourKey(org, stream, h))
    const [sd = 0, sb = 0, sc = 0] = await this.r.ob_reputation_sum(1 + hours.length, sums, ...hours, 2 * HOUR_MS)
    return { delivered: d + sd, hard_bounced: b + sb, complained: c + sc }
  }
}
