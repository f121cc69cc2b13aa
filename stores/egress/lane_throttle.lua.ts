/**
 * The part every egress script that reads a lane's throttle shares: the clock and the lazy recovery. A module
 * rather than a .lua file so that it is part of what tsc builds; the scripts put it before their own text. The
 * text is a template literal, so it holds no backtick and no dollar-brace.
 */
export const LANE_THROTTLE_LUA = String.raw`-- The clock of the egress scripts is Redis's own (TIME), so engines on several
-- hosts agree. Epoch ms.
local function now_ms ()
  local t = redis.call('TIME')
  return math.floor(tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000)
end

-- The lowest factor a run of slows can reach: a lane never stops on its rate alone.
local MIN_FACTOR = 1 / 64

-- A lane's throttle (the HASH at key) as it stands at now, recovery applied: the factor doubles for every whole
-- recovery period (every, ms) since the last slow, up to 1. Recovery is computed on read, never written, so an
-- idle lane recovers without anyone touching it. full_at is when the stored factor is back to 1 (0: it is). seen is
-- the factor last made visible (a slow, or a recovery step claimed below); a hash from before it was kept counts
-- its stored factor as seen.
local function read_throttle (key, now, every)
  local h = redis.call('HMGET', key, 'factor', 'paused_until', 'out_until', 'changed_at', 'reason', 'slowed_at', 'seen')
  local stored = tonumber(h[1]) or 1
  if stored ~= stored or stored > 1 then stored = 1 end
  if stored < MIN_FACTOR then stored = MIN_FACTOR end
  local slowed_at = tonumber(h[6]) or 0
  local factor = stored
  local full_at = 0
  if stored < 1 then
    local steps = math.floor((now - slowed_at) / every)
    if steps >= 6 then factor = 1 elseif steps > 0 then factor = math.min(1, stored * 2 ^ steps) end
    local needed, f = 0, stored
    while f < 1 do f = f * 2; needed = needed + 1 end
    full_at = slowed_at + needed * every
  end
  local seen = tonumber(h[7]) or stored
  if seen ~= seen then seen = stored end
  return {
    factor = factor, paused_until = tonumber(h[2]) or 0, out_until = tonumber(h[3]) or 0,
    changed_at = tonumber(h[4]) or 0, reason = h[5] or '', slowed_at = slowed_at, full_at = full_at, seen = seen
  }
end

-- Claims the recovery steps the lane took since the factor was last made visible, when claim is '1'. Recovery
-- writes nothing, so no script sees a step happen; the first one to read the lane after it records the factor as
-- seen, in the same atomic step, so each step is claimed by exactly one caller across the cluster (its caller logs
-- and counts it). Only a lane whose factor rose writes, into its existing hash (its expiry unchanged). Returns the
-- factor seen before, as a string ('0' when nothing is claimed).
local function claim_recovery (key, th, claim)
  if claim ~= '1' or th.factor <= th.seen then return '0' end
  local before = th.seen
  redis.call('HSET', key, 'seen', tostring(th.factor))
  th.seen = th.factor
  return tostring(before)
end

-- The throttle as scripts answer it: factor, paused_until, out_until, changed_at, reason (all strings).
local function throttle_reply (th)
  return { tostring(th.factor), tostring(th.paused_until), tostring(th.out_until), tostring(th.changed_at), th.reason }
end
`
