/**
 * One decision of the API rate limiter (rate_limit.ts), a Lua script for Redis. A module rather than a .lua file so
 * that it is part of what tsc builds; the script is a template literal, so it holds no backtick and no dollar-
 * brace.
 */
export const GCRA_LUA = String.raw `-- GCRA (continuous token bucket) in one atomic step, shared by every gateway process. Runs batched
-- (ScriptBatch): one clock reading serves the whole batch, and a bucket decided several times in one batch is
-- read once and written once (gcra_finish.lua), with each decision made in arrival order as if one by one.
-- KEYS[1]  bucket key; it encodes the limit, so a plan change starts a fresh bucket
-- ARGV[1]  emission interval in microseconds (period / limit)
-- ARGV[2]  burst: how many requests a full bucket allows at once
-- ARGV[3]  cost (1 per request)
-- Returns { allowed (0|1), remaining, retry_after_ms, reset_ms }.
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = BATCH.now
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  BATCH.now = now
  BATCH.tat = {}
  BATCH.keys = {}
end
local key = KEYS[1]
local tat = BATCH.tat[key]
if not tat then
  tat = tonumber(redis.call('GET', key) or now)
  BATCH.keys[#BATCH.keys + 1] = key
end
if tat < now then tat = now end
local tau = interval * burst
local new_tat = tat + interval * cost
local allow_at = new_tat - tau
if now < allow_at then
  BATCH.tat[key] = tat
  local remaining = math.floor((tau - (tat - now)) / interval)
  if remaining < 0 then remaining = 0 end
  return { 0, remaining, math.ceil((allow_at - now) / 1000), math.ceil((tat - now) / 1000) }
end
BATCH.tat[key] = new_tat
local remaining = math.floor((tau - (new_tat - now)) / interval)
if remaining < 0 then remaining = 0 end
return { 1, remaining, 0, math.ceil((new_tat - now) / 1000) }
`;
//# sourceMappingURL=gcra.lua.js.map