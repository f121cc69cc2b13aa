/**
 * The lane index the snapshot lists (EgressState marks each lane it uses), a Lua script for Redis (see
 * note_waiting.lua.ts for why a module).
 */
export const INDEX_LANE_LUA = String.raw`-- KEYS[1] = the lane index (ZSET lane -> last seen ms).
-- ARGV[1] = lane, ARGV[2] = most lanes kept, ARGV[3] = how long an unseen lane is kept (ms).
-- Beyond the cap the lanes seen longest ago go first.
local t = redis.call('TIME')
local now = math.floor(tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000)
local key, max, keep = KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZADD', key, now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - keep)
local over = redis.call('ZCARD', key) - max
if over > 0 then redis.call('ZREMRANGEBYRANK', key, 0, over - 1) end
redis.call('PEXPIRE', key, keep)
return 0
`
