import { LANE_THROTTLE_LUA } from './lane_throttle.lua.ts'

/** EgressState.throttle, a Lua script for Redis (see lane_throttle.lua.ts for why a module). */
export const THROTTLE_READ_LUA = LANE_THROTTLE_LUA + String.raw`
-- A lane's throttle now, recovery applied; writes nothing. KEYS[1] = the lane's throttle, ARGV[1] = recovery period (ms).
-- Returns { factor, paused_until, out_until, changed_at, reason }.
return throttle_reply(read_throttle(KEYS[1], now_ms(), tonumber(ARGV[1])))
`
