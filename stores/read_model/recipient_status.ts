import { COUNTED_RECIPIENT_STATUSES, FINAL_STATUS_ORDER } from '../../protocol/mod.ts'

/**
 * Lua shared by the read-model scripts (prepended to each): the message status worked out from its recipients, by
 * the rule of protocol/message_status.ts `messageStatusOf` (a test runs both over the same table of cases). The
 * message hash counts its recipients per status (`c:<status>`) and holds how many it has (`rn`, written when the
 * message is recorded, suppressed ones included), so the status costs one HMGET of those counts, whatever the number
 * of recipients. The status lists come from the TypeScript tables, so the order cannot drift apart.
 */
export const RECIPIENT_STATUS_LUA = `
local FINAL = { ${luaList(FINAL_STATUS_ORDER)} }
local COUNTED = { ${luaList(COUNTED_RECIPIENT_STATUSES)} }
-- what the status is worked out from, read in one HMGET: 'rn', 'base', then 'c:<status>' in COUNTED's order
local STATUS_FIELDS = { 'rn', 'base' }
for _, s in ipairs(COUNTED) do STATUS_FIELDS[#STATUS_FIELDS + 1] = 'c:' .. s end
-- nil while the message is not recorded yet (its recipient count is unknown)
local function status_from_recipients (msg)
  local v = redis.call('HMGET', msg, unpack(STATUS_FIELDS))
  local n = tonumber(v[1] or '0')
  if n == 0 then return nil end
  local c = {}
  for i, s in ipairs(COUNTED) do c[s] = tonumber(v[i + 2] or '0') end
  if c['deferred'] > 0 then return 'deferred' end
  local finals = 0
  for _, s in ipairs(FINAL) do finals = finals + c[s] end
  local base = v[2] or 'queued'
  if finals + c['suppressed'] < n then
    if finals > 0 then return 'sending' end
    return base
  end
  for _, s in ipairs(FINAL) do
    if c[s] > 0 then return s end
  end
  return base
end
`

function luaList (statuses: readonly string[]): string {
  return statuses.map((s) => `'${s}'`).join(', ')
}
