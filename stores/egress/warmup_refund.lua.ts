/** EgressState.refundWarmup, a Lua script for Redis (see warmup_take.lua.ts for why a module). */
export const WARMUP_REFUND_LUA = String.raw`-- KEYS[1] = the day's count, KEYS[2] = the hour's count: one less in each
-- that counted anything (a count that expired stays gone). Returns 0.
for i = 1, 2 do
  local n = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  if n > 0 then redis.call('DECR', KEYS[i]) end
end
return 0
`
