/**
 * The count of a scheduled message as sent (message_store.ts), a Lua script for Redis. A module rather than a .lua
 * file so that it is part of what tsc builds; the script is a template literal, so it holds no backtick and no
 * dollar-brace.
 */
export const RECORD_SENT_LUA = String.raw`-- Counts a scheduled message as sent, in the hour the engine took it up.
-- KEYS[1] message hash, KEYS[2] stats hour hash, KEYS[3..] the message's tag stats hour hashes
-- ARGV: 1 stats retention ms, 2 the hour bucket it is counted in
-- record_queued.lua set 'sent' to '0' on a scheduled message: only such a message is counted here, and once (a
-- redelivery of the message finds the hour in its place). A message recorded as sent at once holds '1', and one
-- recorded before scheduled mail was counted this way holds nothing: both were counted at acceptance.
if redis.call('HGET', KEYS[1], 'sent') ~= '0' then return 0 end
redis.call('HSET', KEYS[1], 'sent', ARGV[2])
for i = 2, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'sent', 1)
  redis.call('PEXPIRE', KEYS[i], ARGV[1])
end
return 1
`
