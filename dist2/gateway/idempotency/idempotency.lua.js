/**
 * The claim of an Idempotency-Key (idempotency_store.ts), a Lua script for Redis. A module rather than a .lua file so
 * that it is part of what tsc builds; the script is a template literal, so it holds no backtick and no dollar-
 * brace.
 */
export const IDEMPOTENCY_LUA = String.raw `-- Claims an Idempotency-Key, or reports what the key already holds, in one atomic step.
-- KEYS[1]  ob:idem:<org>:<key>
-- ARGV[1]  fingerprint of the request (64 hex characters: SHA-256 of the path and the raw body)
-- ARGV[2]  claim token (unique per request), so only the claimant can release the claim
-- ARGV[3]  how long an unfinished claim lives, in milliseconds (a crashed gateway must not hold a key for 24 h)
-- Stored value, by its first character:
--   'p' .. fingerprint .. token     in flight
--   'd' .. fingerprint .. response  done: the response to replay
--   'r' .. fingerprint .. state     a publish failed: the message ids to reuse on the retry
-- Returns {0} claimed, {1} in flight, {2, response} done, {3} the key was used with another request,
--         {4, state} claimed as the retry of a failed publish.
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 2, 65) ~= ARGV[1] then return { 3 } end
local state = v and string.sub(v, 1, 1)
if state == 'p' then return { 1 } end
if state == 'd' then return { 2, string.sub(v, 66) } end
redis.call('SET', KEYS[1], 'p' .. ARGV[1] .. ARGV[2], 'PX', ARGV[3])
if state == 'r' then return { 4, string.sub(v, 66) } end
return { 0 }
`;
//# sourceMappingURL=idempotency.lua.js.map