/**
 * EgressState.takeWarmup, a Lua script for Redis. A module rather than a .lua file so that it is part of what tsc
 * builds; a template literal, so it holds no backtick and no dollar-brace. The keys name their UTC day and hour, so a
 * new period starts at zero without anything being reset.
 */
export const WARMUP_TAKE_LUA = String.raw`-- KEYS[1] = the day's count, KEYS[2] = the hour's count.
-- ARGV[1] = allowance per day, ARGV[2] = per hour (-1: none), ARGV[3] = ms until the day ends, ARGV[4] = until the
-- hour ends, ARGV[5] = how long a count is kept after its period (ms).
-- Returns 0 when the message may go (both counted), else ms until the period that is used up ends.
local per_day, per_hour = tonumber(ARGV[1]), tonumber(ARGV[2])
local to_day, to_hour, keep = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local day = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local hour = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
if per_day >= 0 and day >= per_day then return to_day end
if per_hour >= 0 and hour >= per_hour then return to_hour end
redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], to_day + keep)
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], to_hour + keep)
return 0
`
