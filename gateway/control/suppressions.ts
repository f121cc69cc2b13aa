import {
  ApiError, STREAM_ID_MESSAGE, SUPPRESSION_REASONS, isBroadcast, isStreamId, type FieldError, type SuppressionRecord
} from '../../protocol/mod.ts'
import { KvConflictError, entryKey, type ControlPlane, type SuppressionFilter } from '../../stores/control_plane/mod.ts'
import { pageParams, withinBytes, type Page } from '../http/pagination.ts'

/**
 * `local@domain` with no spaces or angle brackets, the domain at least two dot-separated labels; at most 254
 * characters (RFC 5321 path limit). Labels exclude the dot, so the pattern is matched in one pass (the earlier
 * `[^…]+\.[^…]+` could split a domain at every dot and took quadratic time on a long one).
 */
export const EMAIL_PATTERN = '^[^\\s@<>]{1,64}@[^\\s@<>.]+(?:\\.[^\\s@<>.]+)+$'
const EMAIL = new RegExp(EMAIL_PATTERN)

/** The longest date-time accepted (`2026-11-28T23:59:59.999+05:30` is 29 characters). */
const MAX_DATE_TIME = 40
/** An ISO 8601 date-time with a zone, as `expires_at`, `since` and `until` take it. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/

export function normalizeEmail (email: string): string {
  return email.trim().toLowerCase()
}

export function isEmail (email: string): boolean {
  return email.length <= 254 && EMAIL.test(email)
}

/** The instant of an ISO 8601 date-time with a zone in UTC (`toISOString`, which orders as a string), or undefined. */
export function dateTime (value: string): string | undefined {
  if (value.length > MAX_DATE_TIME || !DATE_TIME.test(value)) return undefined
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}

/** Why `expires_at` cannot be used (not a date-time, not in the future), or its UTC form. */
export function expiryOf (value: string, now = Date.now()): { iso: string } | { problem: string } {
  const iso = dateTime(value)
  if (iso === undefined) return { problem: 'must be an ISO 8601 date-time with a zone (2027-01-31T00:00:00Z)' }
  if (Date.parse(iso) <= now) return { problem: 'must be in the future' }
  return { iso }
}

export function suppressionView (s: SuppressionRecord): Record<string, unknown> {
  const v: Record<string, unknown> = { email: s.email, reason: s.reason }
  if (s.message_id !== undefined) v.message_id = s.message_id
  v.created_at = s.created_at
  if (s.expires_at !== undefined) v.expires_at = s.expires_at
  if (s.stream !== undefined) v.stream = s.stream
  return v
}

/** `?reason=&since=&until=` of the list and the export; each bad one is a 400 naming it. */
export function suppressionFilter (query: URLSearchParams): SuppressionFilter {
  const filter: SuppressionFilter = {}
  const errors: FieldError[] = []
  const reason = query.get('reason')
  if (reason !== null && reason !== '') {
    if ((SUPPRESSION_REASONS as readonly string[]).includes(reason)) filter.reason = reason as SuppressionFilter['reason']
    else errors.push({ field: 'reason', message: `must be one of ${SUPPRESSION_REASONS.join(', ')}` })
  }
  const stream = query.get('stream')
  if (stream !== null && stream !== '') {
    if (isStreamId(stream)) filter.stream = stream
    else errors.push({ field: 'stream', message: STREAM_ID_MESSAGE })
  }
  for (const field of ['since', 'until'] as const) {
    const value = query.get(field)
    if (value === null || value === '') continue
    const iso = dateTime(value)
    if (iso === undefined) errors.push({ field, message: 'must be an ISO 8601 date-time with a zone (2026-11-01T00:00:00Z)' })
    else filter[field] = iso
  }
  if (errors.length > 0) throw ApiError.validation(errors)
  return filter
}

function matches (s: SuppressionRecord, f: SuppressionFilter): boolean {
  return (f.reason === undefined || s.reason === f.reason) && (f.since === undefined || s.created_at >= f.since) &&
    (f.until === undefined || s.created_at < f.until) && (f.stream === undefined || s.stream === undefined || s.stream === f.stream)
}

function cursorAfter (cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined
  const after = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!after.includes('@')) throw ApiError.validation([{ field: 'cursor', message: 'is not a cursor this API returned' }])
  return after
}

// the entry's place in the list: its address, and the stream of a stream's own entry (an address may have several)
const cursorOf = (s: SuppressionRecord): string => Buffer.from(entryKey(s)).toString('base64url')

/**
 * Suppressions have no id: they are listed in order of address (lower-cased), and the cursor is the last
 * address returned, base64url-encoded so clients treat it as opaque. `?email=` is one look-up by key; a page
 * reads the organisation's own ordered list from the cursor on, never another organisation's entries.
 */
export function pageSuppressions (cp: ControlPlane, orgId: string, query: URLSearchParams, maxBytes: number): Page<SuppressionRecord> {
  const { limit, cursor } = pageParams(query, maxBytes)
  const filter = suppressionFilter(query)
  const after = cursorAfter(cursor)
  const email = query.get('email')
  if (email !== null && email !== '') {
    // the entry for every stream, then each stream's own (the organisation's current streams, or the one asked for)
    const streams = (filter.stream !== undefined ? [filter.stream] : cp.streams.list(orgId).map((st) => st.id)).filter(isBroadcast)
    const now = Date.now()
    const found = [cp.suppressionLists.active(orgId, email), ...streams.map((st) => cp.suppressionLists.active(orgId, email, now, st))]
    const data = found.filter((r): r is SuppressionRecord =>
      r !== undefined && matches(r, filter) && (after === undefined || entryKey(r) > after))
    return { data, has_more: false, next_cursor: null }
  }
  const { items, more } = cp.suppressionLists.page(orgId, { ...(after !== undefined ? { after } : {}), limit, filter })
  const page = { data: items, has_more: more, next_cursor: more ? cursorOf(items[items.length - 1]!) : null }
  return withinBytes(page, maxBytes, cursorOf)
}

/**
 * Adds a manual suppression, with an expiry or none; an address already suppressed keeps its entry (returned
 * with created=false), whatever expiry was asked.
 */
export async function suppress (cp: ControlPlane, orgId: string, email: string, expiresAt?: string):
Promise<{ record: SuppressionRecord, created: boolean }> {
  try {
    return await cp.suppressionLists.add(orgId, email, 'manual', expiresAt !== undefined ? { expiresAt } : {})
  } catch (err) {
    if (!(err instanceof KvConflictError)) throw err
    throw new ApiError('conflict', `The address ${normalizeEmail(email)} is being changed; retry.`, { cause: err })
  }
}

export async function unsuppress (cp: ControlPlane, orgId: string, email: string, stream?: string): Promise<void> {
  if (!await cp.suppressionLists.remove(orgId, email, stream)) {
    throw new ApiError('not_found', `${normalizeEmail(email)} is not on the suppression list.`)
  }
}
