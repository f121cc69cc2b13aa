import { LANE_THROTTLE_LUA } from './lane_throttle.lua.ts'

/**
 * Waiting marks, the lane index and the operators' view of a lane, Lua scripts for Redis. Modules rather than .lua
 * files so that they are part of what tsc builds; template literals, so no backtick or dollar-brace.
 */
export const NOTE_WAITING_LUA = String.raw`-- KEYS[1] = the lane's waiting messages (ZSET id -> first wait ms).
-- ARGV[1] = message id, ARGV[2] = longest a mark is kept (ms), ARGV[3] = most marks kept.
-- The first mark of a message stays (NX). Marks older than the limit go, so a message nobody cleared (its engine
-- died, it expired) is forgotten; when the set is full a new message is not marked, so the oldest age stays true.
local t = redis.call('TIME')
local now = math.floor(tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000)
local key, max_age = KEYS[1], tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', key, '-inf', now - max_age)
if redis.call('ZCARD', key) < tonumber(ARGV[3]) then redis.call('ZADD', key, 'NX', now, ARGV[1]) end
redis.call('PEXPIRE', key, max_age)
return 0
`

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
