/**
 * A scheduled message's cancel or new time in the read model (message_store.ts), a Lua script for Redis. A module
 * rather than a .lua file so that it is part of what tsc builds; the script is a template literal, so it holds no
 * backtick and no dollar-brace.
 */
export const SCHEDULE_CHANGE_LUA = String.raw`-- Shows a cancel or a new time of a scheduled message (decided in
-- stores/schedule) in the read model.
-- KEYS[1] message hash. ARGV: 1 'cancel' | 'reschedule', 2 live status index key prefix, 3 message id,
-- 4 cancel: the rank of 'canceled'; reschedule: the new scheduled_at (ISO 8601), 5 retention ms,
-- 6 sandbox status index key prefix (the message's 'env' field picks one), 7 live due index key, 8 sandbox due index
-- key, 9 reschedule: the new scheduled_at in ms
-- A message not recorded yet is left alone (its record comes from the queued message, the engine marks it again).
local msg, mid = KEYS[1], ARGV[3]
local h = redis.call('HMGET', msg, 'summary', 'status', 'rank', 'created', 'env')
local prefix = h[5] == 'test' and ARGV[6] or ARGV[2]
local due = h[5] == 'test' and ARGV[8] or ARGV[7]
if not h[1] then return 0 end
if ARGV[1] == 'reschedule' then
  redis.call('HSET', msg, 'scheduled_at', ARGV[4])
  if h[2] == 'queued' or h[2] == 'scheduled' then redis.call('ZADD', due, ARGV[9], mid) end
  return 1
end
-- only a message nothing happened to yet (queued or scheduled, rank 0) becomes canceled
if tonumber(h[3] or '0') > 0 then return 0 end
redis.call('HSET', msg, 'status', 'canceled', 'rank', ARGV[4])
redis.call('ZREM', due, mid)
if h[2] then redis.call('ZREM', prefix .. h[2], mid) end
local key = prefix .. 'canceled'
redis.call('ZADD', key, h[4] or 0, mid)
redis.call('PEXPIRE', key, ARGV[5])
return 1
`
