import { LANE_THROTTLE_LUA } from './lane_throttle.lua.ts'

/** EgressState.takeSend, a Lua script for Redis (see lane_throttle.lua.ts for why a module). */
export const SEND_LUA = LANE_THROTTLE_LUA + String.raw`
-- May one message go on a lane now? KEYS[1] = the lane's throttle, KEYS[2] = its GCRA (the key names the limit).
-- ARGV[1] = messages per minute (0: no rate limit), ARGV[2] = recovery period (ms), ARGV[3] = '1' to claim the
-- recovery steps the lane took (claim_recovery). Returns { 0, 'go' } (the send is counted) or { wait ms, 'out' |
-- 'paused' | 'rate' }, followed by the factor seen before and the factor now when steps were claimed ('0', '').
local now = now_ms()
local th = read_throttle(KEYS[1], now, tonumber(ARGV[2]))
local before = claim_recovery(KEYS[1], th, ARGV[3])
local after = ''
if before ~= '0' then after = tostring(th.factor) end
-- a pause or an out holds the lane until it ends; with both, until the later end
local until_ms, why = 0, ''
if th.out_until > now then until_ms, why = th.out_until, 'out' end
if th.paused_until > until_ms then until_ms, why = th.paused_until, 'paused' end
if until_ms > now then return { math.ceil(until_ms - now), why, before, after } end
local per_minute = tonumber(ARGV[1])
if per_minute <= 0 then return { 0, 'go', before, after } end
-- GCRA at the lane's rate times its factor, with a burst of one second's worth (at least one message)
local rate = per_minute * th.factor
local interval = 60000 / rate
local burst = math.max(1, math.floor(rate / 60))
local tat = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if tat < now then tat = now end
local new_tat = tat + interval
local allow_at = new_tat - interval * burst
if allow_at > now then return { math.ceil(allow_at - now), 'rate', before, after } end
redis.call('SET', KEYS[2], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 1000)
return { 0, 'go', before, after }
`
