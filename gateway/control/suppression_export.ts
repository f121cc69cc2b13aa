import type { SuppressionRecord } from '../../protocol/mod.ts'
import { entryKey, type ControlPlane, type SuppressionFilter } from '../../stores/control_plane/mod.ts'

/** Rows read and written together: one read of the organisation's list and one chunk of the answer each. */
const EXPORT_CHUNK_ROWS = 1_000

/**
 * The export's columns; `email,reason,expires_at,stream` is what an import reads back. `stream` came last so that
 * readers of the earlier five columns by position read them as before; it is empty for an entry of every stream.
 */
export const EXPORT_HEADER = 'email,reason,created_at,expires_at,message_id,stream\n'

/** A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180). */
function field (v: string | undefined): string {
  if (v === undefined) return ''
  return /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v
}

function row (s: SuppressionRecord): string {
  return `${field(s.email)},${s.reason},${s.created_at},${s.expires_at ?? ''},${field(s.message_id)},${s.stream ?? ''}\n`
}

/**
 * The organisation's active suppressions matching `filter` as CSV, in address order, EXPORT_CHUNK_ROWS rows a
 * chunk. Each chunk reads the list afresh from the last address written, so entries added or removed while the
 * export runs never break it: an address is written at most once, those added behind the cursor are left out.
 */
export async function * exportSuppressions (cp: ControlPlane, orgId: string, filter: SuppressionFilter): AsyncGenerator<string> {
  yield EXPORT_HEADER
  let after: string | undefined
  for (;;) {
    const { items, more } = cp.suppressionLists.page(orgId, { ...(after !== undefined ? { after } : {}), limit: EXPORT_CHUNK_ROWS, filter })
    if (items.length > 0) {
      let chunk = ''
      for (const s of items) chunk += row(s)
      yield chunk
      after = entryKey(items[items.length - 1]!)
    }
    if (!more) return
  }
}
