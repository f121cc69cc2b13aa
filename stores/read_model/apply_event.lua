-- Applies one event to the read model, atomically and at most once per event id.
-- KEYS[1] event string, KEYS[2] org event index, KEYS[3] org event-type index, KEYS[4] stats hour hash,
-- and for events about a message: KEYS[5] message hash, KEYS[6] message event index;
-- last, ARGV[12] pairs of (tag event index, tag stats hour hash), one per tag of the event
-- ARGV: 1 envelope JSON, 2 event ms, 3 event id, 4 type, 5 retention ms, 6 cutoff ms, 7 stats retention ms,
-- 8 status the event leads to ('' for none), 9 its rank, 10 message id, 11 status index key prefix,
-- 12 number of tags
local ttl, ts, id = ARGV[5], ARGV[2], ARGV[3]
-- The event key doubles as the dedupe record: a replayed event id changes nothing.
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) then return 0 end
local cutoff = '(' .. ARGV[6]
local tags = tonumber(ARGV[12] or '0')
local last = #KEYS - 2 * tags
local function index (key)
  redis.call('ZADD', key, ts, id)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', cutoff)
  redis.call('PEXPIRE', key, ttl)
end
local function count (key)
  redis.call('HINCRBY', key, ARGV[4], 1)
  redis.call('PEXPIRE', key, ARGV[7])
end
index(KEYS[2])
index(KEYS[3])
count(KEYS[4])
for i = last + 1, #KEYS, 2 do
  index(KEYS[i])
  count(KEYS[i + 1])
end
if last < 6 then return 1 end
local msg, mid = KEYS[5], ARGV[10]
redis.call('ZADD', KEYS[6], ts, id)
redis.call('PEXPIRE', KEYS[6], ttl)
if ARGV[8] == '' then return 1 end
local rank = tonumber(redis.call('HGET', msg, 'rank') or '-1')
if tonumber(ARGV[9]) <= rank then return 1 end
local old = redis.call('HGET', msg, 'status')
redis.call('HSET', msg, 'status', ARGV[8], 'rank', ARGV[9])
local created = redis.call('HGET', msg, 'created')
if created then
  if old then redis.call('ZREM', ARGV[11] .. old, mid) end
  local key = ARGV[11] .. ARGV[8]
  redis.call('ZADD', key, created, mid)
  redis.call('PEXPIRE', key, ttl)
elseif redis.call('PTTL', msg) < 0 then
  -- Not recorded yet: the partial hash must still expire if the message never is.
  redis.call('PEXPIRE', msg, ttl)
end
return 1
