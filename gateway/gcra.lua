-- GCRA (continuous token bucket) in one atomic step, shared by every gateway process.
-- KEYS[1]  bucket key; it encodes the limit, so a plan change starts a fresh bucket
-- ARGV[1]  emission interval in microseconds (period / limit)
-- ARGV[2]  burst: how many requests a full bucket allows at once
-- ARGV[3]  cost (1 per request)
-- Returns { allowed (0|1), remaining, retry_after_ms, reset_ms }.
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tau = interval * burst
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local new_tat = tat + interval * cost
local allow_at = new_tat - tau
if now < allow_at then
  local remaining = math.floor((tau - (tat - now)) / interval)
  if remaining < 0 then remaining = 0 end
  return { 0, remaining, math.ceil((allow_at - now) / 1000), math.ceil((tat - now) / 1000) }
end
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil((new_tat - now) / 1000) + 1)
local remaining = math.floor((tau - (new_tat - now)) / interval)
if remaining < 0 then remaining = 0 end
return { 1, remaining, 0, math.ceil((new_tat - now) / 1000) }
