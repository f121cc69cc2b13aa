/**
 * The end of a batch of queued-message records (message_store.ts), a Lua script for Redis. A module rather than a
 * .lua file so that it is part of what tsc builds; the script is a template literal, so it holds no backtick and no
 * dollar-brace.
 */
export const RECORD_QUEUED_FINISH_LUA = String.raw`-- After every call of a record_queued batch: one ZADD, trim and expiry per
-- index, one ZADD and expiry per address index, one HINCRBY per stats hour.
if BATCH.z then
  for _, key in ipairs(BATCH.zkeys) do
    local entries = BATCH.z[key]
    redis.call('ZADD', key, unpack(entries))
    redis.call('ZREMRANGEBYSCORE', key, '-inf', entries.cutoff)
    redis.call('PEXPIRE', key, entries.ttl)
  end
  for _, key in ipairs(BATCH.akeys) do
    local members = BATCH.a[key]
    -- in slices: unpack is bounded by Lua's stack, and a batch may carry thousands of recipients
    for i = 1, #members, 2000 do
      redis.call('ZADD', key, unpack(members, i, math.min(i + 1999, #members)))
    end
    redis.call('PEXPIRE', key, members.ttl)
  end
  for _, key in ipairs(BATCH.ckeys) do
    local count = BATCH.c[key]
    redis.call('HINCRBY', key, 'sent', count.n)
    redis.call('PEXPIRE', key, count.ttl)
  end
end
`
