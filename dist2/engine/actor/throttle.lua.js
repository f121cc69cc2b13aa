/**
 * The destination throttle (throttle.ts), a Lua script for Redis. A module rather than a .lua file so that it is
 * part of what tsc builds; the script is a template literal, so it holds no backtick and no dollar-brace.
 */
export const THROTTLE_LUA = String.raw `-- GCRA throttle for one destination. KEYS[1] = bucket (its parameters are part of the name).
-- ARGV[1] = emission interval (ms per message), ARGV[2] = burst (messages).
-- Returns 0 when the send may go now, else the milliseconds until it may.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local interval = tonumber(ARGV[1])
local tolerance = interval * tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - tolerance
if allow_at > now then
  return math.ceil(allow_at - now)
end
redis.call('SET', KEYS[1], tostring(new_tat), 'PX', math.ceil(new_tat - now) + 1000)
return 0
`;
//# sourceMappingURL=throttle.lua.js.map