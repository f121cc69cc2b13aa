import type { Redis } from 'ioredis'
import { webhookRecoveringKey } from '../../protocol/mod.ts'

/** How long an event queued by a recover is not queued again by another recover of the same webhook. */
export const RECOVER_DEDUPE_MS = 3600_000 // 1 h, documented

/** Ids sent to Redis per script call, so one call stays short whatever the recover's size. */
const CLAIM_CHUNK = 1000

// KEYS[1] the webhook's sorted set (member: event id, score: when a recover queued it).
// ARGV[1] now (ms), ARGV[2] window (ms), ARGV[3..] event ids. Returns the ids this call claimed.
const CLAIM_LUA = `
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local claimed = {}
for i = 3, #ARGV do
  if redis.call('ZADD', KEYS[1], 'NX', now, ARGV[i]) == 1 then claimed[#claimed + 1] = ARGV[i] end
end
redis.call('PEXPIRE', KEYS[1], window)
return claimed
`

type ClaimRedis = Redis & { ob_recover_claim: (key: string, ...args: Array<string | number>) => Promise<string[]> }

/**
 * Which events a recover may queue for a webhook: those no recover of it queued in the last hour. Claims are
 * atomic per event, so two recovers running at once (a client that retried) never queue one event twice.
 */
export class RecoveryClaims {
  private readonly redis: ClaimRedis

  constructor (redis: Redis) {
    const r = redis as unknown as Partial<ClaimRedis>
    if (typeof r.ob_recover_claim !== 'function') redis.defineCommand('ob_recover_claim', { numberOfKeys: 1, lua: CLAIM_LUA })
    this.redis = redis as unknown as ClaimRedis
  }

  /** The ids of `eventIds` claimed now (in their order); the others were queued by a recover within the hour. */
  async claim (webhookId: string, eventIds: readonly string[], now = Date.now()): Promise<string[]> {
    const claimed: string[] = []
    for (let i = 0; i < eventIds.length; i += CLAIM_CHUNK) {
      const chunk = eventIds.slice(i, i + CLAIM_CHUNK)
      claimed.push(...await this.redis.ob_recover_claim(webhookRecoveringKey(webhookId), now, RECOVER_DEDUPE_MS, ...chunk))
    }
    return claimed
  }

  /** Gives claims back (their jobs could not be queued), so a retried recover queues them. */
  async release (webhookId: string, eventIds: readonly string[]): Promise<void> {
    for (let i = 0; i < eventIds.length; i += CLAIM_CHUNK) {
      await this.redis.zrem(webhookRecoveringKey(webhookId), ...eventIds.slice(i, i + CLAIM_CHUNK))
    }
  }
}
