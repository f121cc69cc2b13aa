/**
 * EgressState.noteWaiting, a Lua script for Redis. A module rather than a .lua file so that it is part of what tsc
 * builds; a template literal, so it holds no backtick and no dollar-brace.
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
