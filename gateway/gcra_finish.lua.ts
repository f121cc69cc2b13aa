/**
 * The end of a batch of rate-limit decisions (rate_limit.ts), a Lua script for Redis. A module rather than a .lua
 * file so that it is part of what tsc builds; the script is a template literal, so it holds no backtick and no
 * dollar-brace.
 */
export const GCRA_FINISH_LUA = String.raw`-- After every decision of a GCRA batch: each bucket's final theoretical arrival
-- time, kept until it has drained.
if BATCH.keys then
  for _, key in ipairs(BATCH.keys) do
    local tat = BATCH.tat[key]
    if tat > BATCH.now then
      redis.call('SET', key, string.format('%.0f', tat), 'PX', math.ceil((tat - BATCH.now) / 1000) + 1)
    end
  end
end
`
