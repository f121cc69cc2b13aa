import { ApiError, type SuppressionRecord } from '../../protocol/mod.ts'
import { KvConflictError, suppressionKey, type ControlPlane } from '../../stores/control_plane/mod.ts'
import { pageParams, withinBytes, type Page } from '../http/pagination.ts'

/**
 * `local@domain` with no spaces or angle brackets, the domain at least two dot-separated labels; at most 254
 * characters (RFC 5321 path limit). Labels exclude the dot, so the pattern is matched in one pass (the earlier
 * `[^…]+\.[^…]+` could split a domain at every dot and took quadratic time on a long one).
 */
export const EMAIL_PATTERN = '^[^\\s@<>]{1,64}@[^\\s@<>.]+(?:\\.[^\\s@<>.]+)+$'
const EMAIL = new RegExp(EMAIL_PATTERN)

export function normalizeEmail (email: string): string {
  return email.trim().toLowerCase()
}

export function isEmail (email: string): boolean {
  return email.length <= 254 && EMAIL.test(email)
}

export function suppressionView (s: SuppressionRecord): Record<string, unknown> {
  const v: Record<string, unknown> = { email: s.email, reason: s.reason }
  if (s.message_id !== undefined) v.message_id = s.message_id
  v.created_at = s.created_at
  return v
}

/**
 * Suppressions have no id: they are listed in order of address (lower-cased), and the cursor is the last
 * address returned, base64url-encoded so clients treat it as opaque.
 */
export function pageSuppressions (cp: ControlPlane, orgId: string, query: URLSearchParams, maxBytes: number): Page<SuppressionRecord> {
  const { limit, cursor } = pageParams(query, maxBytes)
  const filter = query.get('email')
  let items = cp.suppressions.list(`${orgId}.`)
  if (filter !== null && filter !== '') {
    const wanted = normalizeEmail(filter)
    items = items.filter((s) => normalizeEmail(s.email) === wanted)
  }
  const sorted = items.map((s) => ({ s, k: normalizeEmail(s.email) })).sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
  let start = 0
  if (cursor !== undefined) {
    const after = Buffer.from(cursor, 'base64url').toString('utf8')
    if (!after.includes('@')) throw ApiError.validation([{ field: 'cursor', message: 'is not a cursor this API returned' }])
    while (start < sorted.length && sorted[start]!.k <= after) start++
  }
  const data = sorted.slice(start, start + limit)
  const hasMore = start + limit < sorted.length
  const page = {
    data: data.map((x) => x.s),
    has_more: hasMore,
    next_cursor: hasMore ? Buffer.from(data[data.length - 1]!.k).toString('base64url') : null
  }
  return withinBytes(page, maxBytes, (s) => Buffer.from(normalizeEmail(s.email)).toString('base64url'))
}

/** Adds a manual suppression; an address already suppressed keeps its first record (returned with created=false). */
export async function suppress (cp: ControlPlane, orgId: string, email: string): Promise<{ record: SuppressionRecord, created: boolean }> {
  const key = suppressionKey(orgId, email)
  const existing = cp.suppressions.get(key)
  if (existing !== undefined) return { record: existing, created: false }
  const record: SuppressionRecord = { org_id: orgId, email: normalizeEmail(email), reason: 'manual', created_at: new Date().toISOString() }
  try {
    await cp.suppressions.create(key, record)
  } catch (err) {
    if (!(err instanceof KvConflictError)) throw err
    const raced = cp.suppressions.get(key)
    if (raced !== undefined) return { record: raced, created: false }
    throw new ApiError('conflict', `The address ${record.email} is being changed; retry.`, { cause: err })
  }
  return { record, created: true }
}

export async function unsuppress (cp: ControlPlane, orgId: string, email: string): Promise<void> {
  const key = suppressionKey(orgId, email)
  if (cp.suppressions.get(key) === undefined) throw new ApiError('not_found', `${normalizeEmail(email)} is not on the suppression list.`)
  await cp.suppressions.delete(key)
}
