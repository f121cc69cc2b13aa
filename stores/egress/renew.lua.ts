/** EgressState.renewConnections, a Lua script for Redis (see acquire.lua.ts for why a module). */
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
