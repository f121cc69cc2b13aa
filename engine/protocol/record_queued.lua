-- Records a queued message in the read model, atomically.
-- KEYS[1] message hash, KEYS[2] org message index, KEYS[3] stats hour hash, KEYS[4..] recipient indexes
-- ARGV: 1 summary JSON, 2 status, 3 status rank, 4 created ms, 5 retention ms, 6 cutoff ms (older entries are
-- trimmed from indexes), 7 status index key prefix, 8 stats retention ms, 9 message id
local msg = KEYS[1]
-- Recording the same message twice (a retried call) must not count it twice.
if redis.call('HEXISTS', msg, 'summary') == 1 then return 0 end
local created, ttl, cutoff, id = ARGV[4], ARGV[5], '(' .. ARGV[6], ARGV[9]
redis.call('HSET', msg, 'summary', ARGV[1], 'created', created)
-- Events may reach the read model before the gateway records the message: a status they set stands.
local status = redis.call('HGET', msg, 'status')
if not status then
  status = ARGV[2]
  redis.call('HSET', msg, 'status', status, 'rank', ARGV[3])
end
redis.call('PEXPIRE', msg, ttl)
local function index (key)
  redis.call('ZADD', key, created, id)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', cutoff)
  redis.call('PEXPIRE', key, ttl)
end
index(KEYS[2])
index(ARGV[7] .. status)
for i = 4, #KEYS do index(KEYS[i]) end
redis.call('HINCRBY', KEYS[3], 'sent', 1)
redis.call('PEXPIRE', KEYS[3], ARGV[8])
return 1
