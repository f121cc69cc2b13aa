/**
 * The read model's record of a queued message (message_store.ts), a Lua script for Redis. A module rather than a
 * .lua file so that it is part of what tsc builds; the script is a template literal, so it holds no backtick and no
 * dollar-brace.
 */
export const RECORD_QUEUED_LUA = String.raw`-- Records a queued message in the read model. Runs batched (ScriptBatch): each
-- call writes its message hash (one HSET when nothing is known of the message yet) and owner key, and adds its index
-- entries, address index members and counts to BATCH; record_queued_finish.lua writes those with one command per
-- index for the whole batch.
-- (Prepended: status_from_recipients, see recipient_status.ts.)
-- KEYS[1] message hash, KEYS[2] message owner, KEYS[3] org message index, KEYS[4] stats hour hash,
-- KEYS[5] recipient address index (lexicographic), KEYS[6] due index, then for the message's n tags: KEYS[7..6+n]
-- tag indexes and KEYS[7+n..6+2n] tag stats hour hashes
-- ARGV: 1 summary JSON, 2 status, 3 status rank, 4 created ms, 5 retention ms, 6 cutoff ms (older entries are
-- trimmed from indexes), 7 status index key prefix, 8 stats retention ms, 9 message id, 10 organisation id,
-- 11 environment, 12 recipient count (suppressed ones included), 13 when its first attempt is due (ms: scheduled,
-- else created time), 14 how many recipients were skipped as suppressed, 15 '1' when it counts as sent now (sent at
-- once), '0' for a scheduled message (counted when the engine takes it up, record_sent.lua), 16.. recipient address
-- index members
local msg = KEYS[1]
local held = redis.call('HMGET', msg, 'summary', 'status')
-- Recording the same message twice (a retried call) must not count it twice.
if held[1] then return 0 end
local created, ttl, id = ARGV[4], ARGV[5], ARGV[9]
local status = ARGV[2]
-- Recipients skipped as suppressed have their outcome from the start: counted, never attempted.
if tonumber(ARGV[14]) > 0 then redis.call('HSET', msg, 'c:suppressed', ARGV[14]) end
if held[2] then
  -- Events reached the read model before the message was recorded: the status follows their recipients.
  redis.call('HSET', msg, 'summary', ARGV[1], 'created', created, 'env', ARGV[11], 'rn', ARGV[12], 'base', ARGV[2],
    'sent', ARGV[15])
  status = status_from_recipients(msg)
  redis.call('HSET', msg, 'status', status)
else
  redis.call('HSET', msg, 'summary', ARGV[1], 'created', created, 'env', ARGV[11], 'rn', ARGV[12], 'base', ARGV[2],
    'status', status, 'rank', ARGV[3], 'sent', ARGV[15])
end
redis.call('PEXPIRE', msg, ttl)
redis.call('SET', KEYS[2], ARGV[10], 'PX', ttl)
if not BATCH.z then BATCH.z, BATCH.zkeys, BATCH.c, BATCH.ckeys, BATCH.a, BATCH.akeys = {}, {}, {}, {}, {}, {} end
-- recipient address index members (all at score 0), written for the whole batch by the finish
if #ARGV >= 16 then
  local members = BATCH.a[KEYS[5]]
  if not members then
    members = { ttl = ttl }
    BATCH.a[KEYS[5]] = members
    BATCH.akeys[#BATCH.akeys + 1] = KEYS[5]
  end
  for i = 16, #ARGV do
    members[#members + 1] = 0
    members[#members + 1] = ARGV[i]
  end
end
local function index (key, score)
  local entries = BATCH.z[key]
  if not entries then
    entries = { cutoff = '(' .. ARGV[6], ttl = ttl }
    BATCH.z[key] = entries
    BATCH.zkeys[#BATCH.zkeys + 1] = key
  end
  entries[#entries + 1] = score or created
  entries[#entries + 1] = id
end
index(KEYS[3])
index(ARGV[7] .. status)
-- Waiting for an attempt (the rule of due.ts): due at the next attempt of a deferral that came first, else at its
-- (scheduled) time. Only events that came first can have deferred a recipient.
local due = nil
if held[2] and (status == 'deferred' or tonumber(redis.call('HGET', msg, 'c:deferred') or '0') > 0) then
  due = redis.call('HGET', msg, 'next')
elseif status == 'queued' or status == 'scheduled' or status == 'sending' then
  due = (held[2] and redis.call('HGET', msg, 'next')) or ARGV[13]
end
if due then index(KEYS[6], due) end
local tags = (#KEYS - 6) / 2
for i = 7, 6 + tags do index(KEYS[i]) end
local function count (key)
  local c = BATCH.c[key]
  if not c then
    c = { n = 0, ttl = ARGV[8] }
    BATCH.c[key] = c
    BATCH.ckeys[#BATCH.ckeys + 1] = key
  end
  c.n = c.n + 1
end
-- 'sent' counts mail handed to delivery: a scheduled message not yet taken up is not sent (and one canceled never is).
if ARGV[15] == '1' then
  count(KEYS[4])
  for i = 7 + tags, #KEYS do count(KEYS[i]) end
end
return 1
`
