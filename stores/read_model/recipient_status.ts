import { UNDELIVERED_STATUS_ORDER } from '../../protocol/mod.ts'

/**
 * Lua shared by the read-model scripts (prepended to each): the message status worked out from its recipients.
 * The message hash counts its recipients per status (`c:<status>`) and holds how many it has (`rn`, written
 * when the message is recorded), so the status costs one read per status, whatever the number of recipients.
 * The order comes from UNDELIVERED_STATUS_ORDER, so the scripts and the documentation cannot disagree.
 */
export const RECIPIENT_STATUS_LUA = `
local UNDELIVERED = { ${undeliveredLuaList()} }
-- nil while the message is not recorded yet (its recipient count is unknown)
local function status_from_recipients (msg)
  local n = tonumber(redis.call('HGET', msg, 'rn') or '0')
  if n == 0 then return nil end
  local delivered = tonumber(redis.call('HGET', msg, 'c:delivered') or '0')
  if delivered >= n then return 'delivered' end
  for _, s in ipairs(UNDELIVERED) do
    if tonumber(redis.call('HGET', msg, 'c:' .. s) or '0') > 0 then return s end
  end
  if delivered > 0 then return 'sending' end
  return redis.call('HGET', msg, 'base') or 'queued'
end
`

/** UNDELIVERED_STATUS_ORDER less the statuses worked out otherwise (sending, scheduled, queued), as Lua strings. */
function undeliveredLuaList (): string {
  return UNDELIVERED_STATUS_ORDER.filter((s) => s !== 'sending' && s !== 'scheduled' && s !== 'queued').map((s) => `'${s}'`).join(', ')
}
