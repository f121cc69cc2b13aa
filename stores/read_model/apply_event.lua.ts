/**
 * The read model's apply of one event (message_store.ts), a Lua script for Redis. A module rather than a .lua file
 * so that it is part of what tsc builds; the script is a template literal, so it holds no backtick and no dollar-
 * brace.
 */
export const APPLY_EVENT_LUA = String.raw`-- Applies one event to the read model, atomically and at most once per event id.
-- (Prepended: status_from_recipients, see recipient_status.ts.)
-- KEYS[1] event string, KEYS[2] event owner; live indexes: KEYS[3] org event index, KEYS[4] org event-type index,
-- KEYS[5] stats hour hash; the same three for sandbox traffic: KEYS[6..8]; for events about a message: KEYS[9]
-- message hash, KEYS[10] message event index; last, per tag of the event (ARGV[15] of them): live tag event index,
-- live tag stats hour hash, sandbox tag event index, sandbox tag stats hour hash
-- ARGV: 1 envelope JSON, 2 event ms, 3 event id, 4 type, 5 retention ms, 6 cutoff ms, 7 stats retention ms,
-- 8 status the event leads to ('' for none), 9 its rank, 10 message id, 11 live status index key prefix,
-- 12 sandbox status index key prefix, 13 recipient address ('' for none), 14 '1' when the event ends an attempt,
-- 15 number of tags, 16 live due index key, 17 sandbox due index key, 18 a deferral's next attempt in ms ('' for none),
-- 19 organisation id, 20 the message's retention ms (ARGV[5] is the events'), 21 a bounce's reason ('' for none)
local ttl, ts, id = ARGV[5], ARGV[2], ARGV[3]
local mttl = ARGV[20] or ttl
-- The event key doubles as the dedupe record: a replayed event id changes nothing.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) then return 0 end
-- Who owns the id, for as long as the event is kept: a replay of another organisation's event id is then 403 in one
-- read, where looking in every organisation would cost as many reads as there are organisations.
redis.call('SET', KEYS[2], ARGV[19], 'PX', ttl)
local tags = tonumber(ARGV[15] or '0')
local base = #KEYS - 4 * tags
local msg = base >= 10 and KEYS[9] or nil
-- A message's events are indexed and counted with its environment; events of no message are live.
local sandbox = msg ~= nil and redis.call('HGET', msg, 'env') == 'test'
local first = sandbox and 6 or 3
local cutoff = '(' .. ARGV[6]
local function index (key)
  redis.call('ZADD', key, ts, id)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', cutoff)
  redis.call('PEXPIRE', key, ttl)
end
local function count (key)
  redis.call('HINCRBY', key, ARGV[4], 1)
  redis.call('PEXPIRE', key, ARGV[7])
end
index(KEYS[first])
index(KEYS[first + 1])
count(KEYS[first + 2])
local tagFirst = sandbox and 2 or 0
for i = base + 1, #KEYS, 4 do
  index(KEYS[i + tagFirst])
  count(KEYS[i + tagFirst + 1])
end
if msg == nil then return 1 end
local mid, prefix = ARGV[10], sandbox and ARGV[12] or ARGV[11]
redis.call('ZADD', KEYS[10], ts, id)
redis.call('PEXPIRE', KEYS[10], mttl)
-- What a list row shows without reading the events: opens and clicks so far, and the latest bounce's reason.
if ARGV[4] == 'opened' or ARGV[4] == 'clicked' then redis.call('HINCRBY', msg, 'n:' .. ARGV[4], 1) end
if ARGV[21] and ARGV[21] ~= '' then redis.call('HSET', msg, 'bounce', ARGV[21]) end
if redis.call('PTTL', msg) < 0 then
  -- Not recorded yet: the partial hash must still expire if the message never is.
  redis.call('PEXPIRE', msg, mttl)
end
local rcpt = ARGV[13]
if rcpt ~= '' then
  -- Per recipient: '<status> <rank> <attempts> <last event ms>'; rank -1 is no outcome yet. A recipient's status
  -- moves only to a higher rank, so late or replayed events never move it backwards.
  local field = 'r:' .. rcpt
  local st, rank, attempts, last = 'queued', -1, 0, 0
  local held = redis.call('HGET', msg, field)
  if held then
    local a, b, c, d = string.match(held, '^(%S+) (%S+) (%S+) (%S+)')
    st, rank, attempts, last = a, tonumber(b), tonumber(c), tonumber(d)
  end
  if ARGV[14] == '1' then attempts = attempts + 1 end
  if tonumber(ts) > last then last = tonumber(ts) end
  if ARGV[8] ~= '' and tonumber(ARGV[9]) > rank then
    if rank >= 0 then redis.call('HINCRBY', msg, 'c:' .. st, -1) end
    redis.call('HINCRBY', msg, 'c:' .. ARGV[8], 1)
    st, rank = ARGV[8], tonumber(ARGV[9])
  end
  redis.call('HSET', msg, field, st .. ' ' .. rank .. ' ' .. attempts .. ' ' .. last)
end
-- The message's next attempt is the latest one a deferral announced.
if ARGV[18] ~= '' and tonumber(ARGV[18]) > tonumber(redis.call('HGET', msg, 'next') or '0') then
  redis.call('HSET', msg, 'next', ARGV[18])
end
-- A message with a deferred recipient waits in the due index for its next attempt, whatever its status (one recipient
-- bounced and another greylisted reads 'bounced'); a 'sending' one (the rest of its recipients not attempted yet) stays
-- at its due time; one whose every recipient has an outcome leaves it. due.ts reads by the same rule.
-- row: the message's fields, read below after every count and the next attempt above were written.
local function track_due (status, row)
  if not row.created then return end
  local key = sandbox and ARGV[17] or ARGV[16]
  if status == 'deferred' or tonumber(row.deferred or '0') > 0 then
    if row.next then
      redis.call('ZADD', key, row.next, mid)
      redis.call('PEXPIRE', key, mttl)
    end
  elseif status ~= 'queued' and status ~= 'scheduled' and status ~= 'sending' then
    redis.call('ZREM', key, mid)
  end
end
if ARGV[8] == '' then return 1 end
local f = redis.call('HMGET', msg, 'status', 'created', 'next', 'c:deferred', 'rank')
local old = f[1] or nil
local row = { created = f[2] or nil, next = f[3] or nil, deferred = f[4] or nil }
local status = status_from_recipients(msg)
if status == nil then
  -- Recipients unknown (not recorded yet, or recorded before recipients were counted): status by precedence;
  -- recording works it out again from the recipients.
  local rank = tonumber(f[5] or '-1')
  if tonumber(ARGV[9]) <= rank then return 1 end
  status = ARGV[8]
  redis.call('HSET', msg, 'rank', ARGV[9])
end
track_due(status, row)
if old == status then return 1 end
redis.call('HSET', msg, 'status', status)
if row.created then
  if old then redis.call('ZREM', prefix .. old, mid) end
  redis.call('ZADD', prefix .. status, row.created, mid)
  redis.call('PEXPIRE', prefix .. status, mttl)
end
return 1
`
