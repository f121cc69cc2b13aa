/**
 * QueueIndex.update, a Lua script for Redis. A module rather than a .lua file so that it is part of what tsc builds;
 * a template literal, so it holds no backtick and no dollar-brace.
 */
export const INDEX_UPDATE_LUA = String.raw`-- One message's waiting recipients replace what the index held for it (layout in
-- queue_index.ts). KEYS[1] = the message's hash. ARGV[1] message id, ARGV[2] organisation id, ARGV[3] stream
-- sequence, ARGV[4] accepted (ms), ARGV[5] ttl (ms), ARGV[6] now (ms), ARGV[7] n, then n times: recipient,
-- domain, provider ('' when not known), next attempt (ms), last reply ('' when this pass had none).
local mkey, id, org = KEYS[1], ARGV[1], ARGV[2]
local acc, ttl, now, n = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6], tonumber(ARGV[7])
local P = 'ob:q:'
local kinds = { 'domain', 'provider', 'organization' }
local old = { domain = {}, provider = {}, organization = {} }
local fields = redis.call('HGETALL', mkey)
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 'r:' then
    local d, p = string.match(fields[i + 1], '^([^\t]*)\t([^\t]*)\t')
    old.domain[d] = (old.domain[d] or 0) + 1
    if p ~= '' then old.provider[p] = (old.provider[p] or 0) + 1 end
    old.organization[org] = (old.organization[org] or 0) + 1
  end
end
redis.call('DEL', mkey)
local new = { domain = {}, provider = {}, organization = {} }
local soonest = { domain = {}, provider = {}, organization = {} }
local msg_next = nil
local j = 8
for _ = 1, n do
  local rcpt, d, p, nx, reply = ARGV[j], ARGV[j + 1], ARGV[j + 2], tonumber(ARGV[j + 3]), ARGV[j + 4]
  j = j + 5
  redis.call('HSET', mkey, 'r:' .. rcpt, d .. '\t' .. p .. '\t' .. nx)
  local groups = { domain = d, provider = p, organization = org }
  for _, k in ipairs(kinds) do
    local g = groups[k]
    if g ~= '' then
      new[k][g] = (new[k][g] or 0) + 1
      if soonest[k][g] == nil or nx < soonest[k][g] then soonest[k][g] = nx end
      if reply ~= '' then
        redis.call('HSET', P .. 'reply:' .. k, g, now .. '\t' .. reply)
        redis.call('PEXPIRE', P .. 'reply:' .. k, ttl)
      end
    end
  end
  if msg_next == nil or nx < msg_next then msg_next = nx end
end
if n > 0 then
  redis.call('HSET', mkey, 'org', org, 'seq', ARGV[3], 'acc', ARGV[4], 'next', msg_next)
  redis.call('PEXPIRE', mkey, ttl)
end
for _, k in ipairs(kinds) do
  local depth = P .. 'depth:' .. k
  local seen = {}
  for g, c in pairs(new[k]) do
    seen[g] = true
    local msgs, nexts = P .. 'msgs:' .. k .. ':' .. g, P .. 'next:' .. k .. ':' .. g
    redis.call('ZADD', msgs, acc, id)
    redis.call('ZADD', nexts, soonest[k][g], id)
    redis.call('PEXPIRE', msgs, ttl)
    redis.call('PEXPIRE', nexts, ttl)
    local delta = c - (old[k][g] or 0)
    if delta ~= 0 then redis.call('ZINCRBY', depth, delta, g) end
    redis.call('PEXPIRE', depth, ttl)
  end
  for g, c in pairs(old[k]) do
    if not seen[g] then
      redis.call('ZREM', P .. 'msgs:' .. k .. ':' .. g, id)
      redis.call('ZREM', P .. 'next:' .. k .. ':' .. g, id)
      local left = tonumber(redis.call('ZINCRBY', depth, -c, g))
      if left <= 0 then
        redis.call('ZREM', depth, g)
        redis.call('HDEL', P .. 'reply:' .. k, g)
      end
    end
  end
end
return n
`
