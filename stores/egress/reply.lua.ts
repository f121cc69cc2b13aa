import { LANE_THROTTLE_LUA } from './lane_throttle.lua.ts'

/** EgressState.applyReply, a Lua script for Redis (see lane_throttle.lua.ts for why a module). */
export const REPLY_LUA = LANE_THROTTLE_LUA + String.raw`
-- What a reply rule says about a lane. KEYS[1] = the lane's throttle.
-- ARGV[1] = slow | pause | out, ARGV[2] = how long a pause or out lasts (ms), ARGV[3] = the rule's name,
-- ARGV[4] = recovery period (ms), ARGV[5] = quiet time after a slow (ms), ARGV[6] = how long the state is kept after
-- its effect ends (ms), ARGV[7] = '1' to claim the recovery steps taken before this reply (claim_recovery).
-- Returns { changed (0|1), factor, paused_until, out_until, changed_at, reason, factor seen before a claimed
-- recovery ('0': none), the factor it had recovered to }.
local now = now_ms()
local key = KEYS[1]
local th = read_throttle(key, now, tonumber(ARGV[4]))
local before = claim_recovery(key, th, ARGV[7])
local recovered = ''
if before ~= '0' then recovered = tostring(th.factor) end
local kind = ARGV[1]
local changed = false
if kind == 'slow' then
  -- several connections often hear the same reply at once: within the quiet time they count as one slow
  if th.factor > MIN_FACTOR and now - th.slowed_at >= tonumber(ARGV[5]) then
    th.factor = math.max(MIN_FACTOR, th.factor / 2)
    th.slowed_at = now
    local needed, f = 0, th.factor
    while f < 1 do f = f * 2; needed = needed + 1 end
    th.full_at = now + needed * tonumber(ARGV[4])
    -- the new factor is seen (this reply is logged): recovery is claimed from it, whoever claimed before
    redis.call('HSET', key, 'factor', tostring(th.factor), 'slowed_at', tostring(now), 'seen', tostring(th.factor))
    changed = true
  end
elseif kind == 'pause' or kind == 'out' then
  local field = 'paused_until'
  if kind == 'out' then field = 'out_until' end
  local ends = now + math.max(0, math.floor(tonumber(ARGV[2]) or 0))
  -- the later end wins
  if ends > th[field] then
    th[field] = ends
    redis.call('HSET', key, field, tostring(ends))
    changed = true
  end
end
if changed then
  th.changed_at = now
  th.reason = ARGV[3]
  redis.call('HSET', key, 'changed_at', tostring(now), 'reason', ARGV[3])
  -- kept until every effect has ended, and a while longer so operators still see the last rule
  local ends = math.max(th.paused_until, th.out_until, th.full_at)
  redis.call('PEXPIRE', key, math.max(0, ends - now) + tonumber(ARGV[6]))
end
local out = throttle_reply(th)
table.insert(out, 1, changed and 1 or 0)
out[#out + 1] = before
out[#out + 1] = recovered
return out
`
