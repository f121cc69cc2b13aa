/**
 * The schedule state of one scheduled message (mod.ts), a Lua script for Redis. A module rather than a .lua file so
 * that it is part of what tsc builds; the script is a template literal, so it holds no backtick and no dollar-
 * brace.
 */
export const SCHEDULE_LUA = String.raw`-- The schedule state of one scheduled message: the hash KEYS[1] (layout in
-- mod.ts). Each call is one atomic step, so a cancel or a reschedule either happens before the engine takes the
-- message up or is refused.
-- ARGV[1] the step: take | cancel | reschedule; ARGV[2] ttl ms; take: ARGV[3] stream sequence, ARGV[4] the
-- queued scheduled_at (ms), ARGV[5] now (ms), ARGV[6] what the ledger (JetStream KV) holds: '' | 'canceled' | the
-- new time (ms), which stands in for a cancel or time this hash lost (a flushed or replaced Redis);
-- reschedule: ARGV[3] the new time (ms)
-- Answers: take → {'canceled'} | {'duplicate'} | {'taken', the time it became due} | {'wait', at, seq of the first copy seen or ''}
--          cancel → {'ok'} | {'conflict'};  reschedule → {'ok', seq of the waiting copy or ''} | {'conflict', state}
local key, step, ttl = KEYS[1], ARGV[1], ARGV[2]
local h = redis.call('HMGET', key, 'state', 'at', 'holder', 'seq')
local state, at, holder, seq = h[1], h[2], h[3], h[4]
if step == 'take' then
  if state == 'canceled' then return { 'canceled' } end
  local due = tonumber(at or ARGV[4])
  if state == 'taken' then
    if holder == ARGV[3] then return { 'taken', tostring(due) } end
    return { 'duplicate' }
  end
  local ledger = ARGV[6]
  if ledger == 'canceled' then
    redis.call('HSET', key, 'state', 'canceled')
    redis.call('PEXPIRE', key, ttl)
    return { 'canceled' }
  end
  -- a time here is at least as new as the ledger's (the gateway writes here first)
  if not at and ledger ~= nil and ledger ~= '' then
    at = ledger
    redis.call('HSET', key, 'at', at)
    redis.call('PEXPIRE', key, ttl)
    due = tonumber(at)
  end
  if due > tonumber(ARGV[5]) then
    if not seq then redis.call('HSET', key, 'seq', ARGV[3]); redis.call('PEXPIRE', key, ttl) end
    return { 'wait', tostring(due), seq or '' }
  end
  redis.call('HSET', key, 'state', 'taken', 'holder', ARGV[3])
  redis.call('PEXPIRE', key, ttl)
  return { 'taken', tostring(due) }
end
if step == 'cancel' then
  if state == 'taken' then return { 'conflict' } end
  redis.call('HSET', key, 'state', 'canceled')
  redis.call('PEXPIRE', key, ttl)
  return { 'ok' }
end
if step == 'reschedule' then
  if state == 'taken' or state == 'canceled' then return { 'conflict', state } end
  redis.call('HSET', key, 'at', ARGV[3])
  redis.call('PEXPIRE', key, ttl)
  return { 'ok', seq or '' }
end
return redis.error_reply('unknown schedule step')
`
