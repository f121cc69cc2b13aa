import { LANE_THROTTLE_LUA } from './lane_throttle.lua.ts'

/** EgressState.refundSend, a Lua script for Redis (see lane_throttle.lua.ts for why a module). */
export const SEND_REFUND_LUA = LANE_THROTTLE_LUA + String.raw`
-- Gives back one send the lane's GCRA counted for a message that then did not go (no connection slot was free).
-- KEYS[1] = the lane's throttle, KEYS[2] = its GCRA. ARGV[1] = messages per minute, ARGV[2] = recovery period (ms).
-- The theoretical arrival time moves back by one interval at the lane's rate now, never before now (a bucket
-- already full stays full). Returns 0.
local per_minute = tonumber(ARGV[1])
if per_minute <= 0 then return 0 end
local tat = tonumber(redis.call('GET', KEYS[2]) or '')
if tat == nil then return 0 end
local now = now_ms()
local th = read_throttle(KEYS[1], now, tonumber(ARGV[2]))
local new_tat = tat - 60000 / (per_minute * th.factor)
if new_tat <= now then redis.call('DEL', KEYS[2]) return 0 end
redis.call('SET', KEYS[2], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 1000)
return 0
`
