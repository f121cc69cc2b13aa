/**
 * EgressState.acquireConnection, a Lua script for Redis. A module rather than a .lua file so that it is part of what
 * tsc builds; a template literal, so it holds no backtick and no dollar-brace. A holder's score is when its hold expires
 * (Redis TIME, ms): a holder that stops renewing (its engine died) stops counting then, and the next acquire removes it.
 */
export const ACQUIRE_LUA = String.raw`-- KEYS[1] = the lane's holders (ZSET holder -> expiry ms).
-- ARGV[1] = holder, ARGV[2] = most holders at once (-1: no cap), ARGV[3] = hold (ms).
-- Returns 1 when the holder holds a slot (it already did, or one was free), else 0.
local t = redis.call('TIME')
local now = math.floor(tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000)
local key, holder = KEYS[1], ARGV[1]
local max, ttl = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
if not redis.call('ZSCORE', key, holder) then
  if max >= 0 and redis.call('ZCARD', key) >= max then return 0 end
end
redis.call('ZADD', key, now + ttl, holder)
-- the set lives as long as its latest hold
if redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
return 1
`
