-- Records a queued message in the read model. Runs batched (ScriptBatch): each call adds its index entries and
-- counts to BATCH, and record_queued_finish.lua writes them with one command per index for the whole batch.
-- KEYS[1] message hash, KEYS[2] message owner, KEYS[3] org message index, KEYS[4] stats hour hash,
-- KEYS[5..] recipient and tag indexes, then ARGV[11] stats hour hashes of the message's tags
-- ARGV: 1 summary JSON, 2 status, 3 status rank, 4 created ms, 5 retention ms, 6 cutoff ms (older entries are
-- trimmed from indexes), 7 status index key prefix, 8 stats retention ms, 9 message id, 10 organisation id,
-- 11 how many of the last KEYS are tag stats hashes
local msg = KEYS[1]
local held = redis.call('HMGET', msg, 'summary', 'status')
-- Recording the same message twice (a retried call) must not count it twice.
if held[1] then return 0 end
local created, ttl, id = ARGV[4], ARGV[5], ARGV[9]
-- Events may reach the read model before the gateway records the message: a status they set stands.
local status = held[2]
if status then
  redis.call('HSET', msg, 'summary', ARGV[1], 'created', created)
else
  status = ARGV[2]
  redis.call('HSET', msg, 'summary', ARGV[1], 'created', created, 'status', status, 'rank', ARGV[3])
end
redis.call('PEXPIRE', msg, ttl)
redis.call('SET', KEYS[2], ARGV[10], 'PX', ttl)
if not BATCH.z then BATCH.z, BATCH.zkeys, BATCH.c, BATCH.ckeys = {}, {}, {}, {} end
local function index (key)
  local entries = BATCH.z[key]
  if not entries then
    entries = { cutoff = '(' .. ARGV[6], ttl = ttl }
    BATCH.z[key] = entries
    BATCH.zkeys[#BATCH.zkeys + 1] = key
  end
  entries[#entries + 1] = created
  entries[#entries + 1] = id
end
index(KEYS[3])
index(ARGV[7] .. status)
local tagStats = tonumber(ARGV[11] or '0')
for i = 5, #KEYS - tagStats do index(KEYS[i]) end
local function count (key)
  local c = BATCH.c[key]
  if not c then
    c = { n = 0, ttl = ARGV[8] }
    BATCH.c[key] = c
    BATCH.ckeys[#BATCH.ckeys + 1] = key
  end
  c.n = c.n + 1
end
count(KEYS[4])
for i = #KEYS - tagStats + 1, #KEYS do count(KEYS[i]) end
return 1
