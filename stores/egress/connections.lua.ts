/**
 * The connection slots of a lane (EgressState.acquireConnection, renewConnections), Lua scripts for Redis. Modules
 * rather than .lua files so that they are part of what tsc builds; template literals, so no backtick or dollar-brace.
 * Each holder's score is when its hold expires (Redis TIME, ms): a holder that stops renewing (its engine died)
 * stops counting at that time, and the next acquire removes it.
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

export const RENEW_LUA = String.raw`-- KEYS[1] = the lane's holders; ARGV[1] = hold (ms), ARGV[2..] = holders.
-- Extends the hold of each listed holder that still holds a slot; one whose hold lapsed and was removed is not
-- added back (that could exceed the cap). Returns how many were extended.
local t = redis.call('TIME')
local now = math.floor(tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000)
local key, ttl = KEYS[1], tonumber(ARGV[1])
local renewed = 0
for i = 2, #ARGV do
  renewed = renewed + redis.call('ZADD', key, 'XX', 'GT', 'CH', now + ttl, ARGV[i])
end
if renewed > 0 and redis.call('PTTL', key) < ttl then redis.call('PEXPIRE', key, ttl) end
return renewed
`
