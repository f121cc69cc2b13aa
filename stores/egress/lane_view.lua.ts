import { LANE_THROTTLE_LUA } from './lane_throttle.lua.ts'

/** One lane of EgressState.snapshot, a Lua script for Redis (see lane_throttle.lua.ts for why a module). */
export const LANE_VIEW_LUA = LANE_THROTTLE_LUA + String.raw`
-- One lane for operators; writes only to claim a recovery. KEYS[1] = holders, KEYS[2] = throttle, KEYS[3] = waiting marks,
-- KEYS[4] = warm-up count of the day, KEYS[5] = of the hour. ARGV[1] = recovery period (ms), ARGV[2] = longest a
-- waiting mark is kept (ms), ARGV[3] = '1' to claim the recovery steps the lane took (claim_recovery; else it writes
-- nothing). Returns { connections, factor, paused_until, out_until, changed_at, reason, waiting, oldest first-wait
-- ms ('' for none), sent today, sent this hour, now, factor seen before a claimed recovery ('0': none) }.
local now = now_ms()
local connections = redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
local th = read_throttle(KEYS[2], now, tonumber(ARGV[1]))
local before = claim_recovery(KEYS[2], th, ARGV[3])
local out = throttle_reply(th)
table.insert(out, 1, connections)
local since = '(' .. (now - tonumber(ARGV[2]))
out[#out + 1] = redis.call('ZCOUNT', KEYS[3], since, '+inf')
local oldest = redis.call('ZRANGEBYSCORE', KEYS[3], since, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
out[#out + 1] = oldest[2] or ''
out[#out + 1] = redis.call('GET', KEYS[4]) or '0'
out[#out + 1] = redis.call('GET', KEYS[5]) or '0'
out[#out + 1] = tostring(now)
out[#out + 1] = before
return out
`
