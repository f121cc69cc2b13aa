import { LANE_THROTTLE_LUA } from './lane_throttle.lua.ts'

/** One lane of EgressState.snapshot, a Lua script for Redis (see lane_throttle.lua.ts for why a module). */
export const LANE_VIEW_LUA = LANE_THROTTLE_LUA + String.raw`
-- One lane for operators; writes nothing. KEYS[1] = holders, KEYS[2] = throttle, KEYS[3] = waiting marks,
-- KEYS[4] = warm-up count of the day, KEYS[5] = of the hour. ARGV[1] = recovery period (ms), ARGV[2] = longest a
-- waiting mark is kept (ms). Returns { connections, factor, paused_until, out_until, changed_at, reason, waiting,
-- oldest first-wait ms ('' for none), sent today, sent this hour, now }.
local now = now_ms()
local connections = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
local out = throttle_reply(read_throttle(KEYS[2], now, tonumber(ARGV[1])))
table.insert(out, 1, connections)
local since = '(' .. (now - tonumber(ARGV[2]))
out[#out + 1] = redis.call('ZCOUNT', KEYS[3], since, '+inf')
local oldest = redis.call('ZRANGEBYSCORE', KEYS[3], since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
out[#out + 1] = oldest[2] or ''
out[#out + 1] = redis.call('GET', KEYS[4]) or '0'
out[#out + 1] = redis.call('GET', KEYS[5]) or '0'
out[#out + 1] = tostring(now)
return out
`
