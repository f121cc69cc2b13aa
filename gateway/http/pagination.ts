import { Type } from 'typebox'
import { ApiError, itemsWithin } from '../../protocol/mod.ts'

export const DEFAULT_PAGE = 20
export const MAX_PAGE = 100

/** `?limit=1..100&cursor=`; every list endpoint uses it (and adds its own filters). */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({
    minimum: 1,
    maximum: MAX_PAGE,
    default: DEFAULT_PAGE,
    description: 'Items at most; a page also stops before its JSON would pass OB_API_LIST_MAX_BYTES (1 MB by default), ' +
      'with has_more and next_cursor to continue'
  })),
  cursor: Type.Optional(Type.String({ maxLength: 200 }))
})

export function pageSchema<T extends ReturnType<typeof Type.Object>> (item: T) {
  return Type.Object({ data: Type.Array(item), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) })
}

export interface Page<T> { data: T[], has_more: boolean, next_cursor: string | null }

/** `maxBytes`: OB_API_LIST_MAX_BYTES, the most a page's JSON body takes; every list endpoint passes it on. */
export function pageParams (query: URLSearchParams, maxBytes: number): { limit: number, cursor?: string, maxBytes: number } {
  const limit = query.has('limit') ? Number(query.get('limit')) : DEFAULT_PAGE
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw ApiError.validation([{ field: 'limit', message: `must be an integer from 1 to ${MAX_PAGE}` }])
  }
  const cursor = query.get('cursor') ?? undefined
  return cursor === undefined || cursor === '' ? { limit, maxBytes } : { limit, cursor, maxBytes }
}

/**
 * A page cut to what fits in `maxBytes` of JSON (`itemsWithin`): when items had to stay out, `has_more` and the
 * cursor (`cursorOf` the last item kept) say where to continue.
 */
export function withinBytes<T> (page: Page<T>, maxBytes: number, cursorOf: (last: T) => string): Page<T> {
  const n = itemsWithin(page.data, maxBytes)
  if (n === page.data.length) return page
  const data = page.data.slice(0, n)
  return { data, has_more: true, next_cursor: cursorOf(data[n - 1]!) }
}

/**
 * Pages a list already sorted by id (ids sort by creation time). The cursor is the last id returned,
 * base64url-encoded so clients treat it as opaque. `view` is what the response shows of an item; the page is cut to
 * `maxBytes` of it.
 */
export function pageById<T extends { id: string }, V = T> (
  items: readonly T[], query: URLSearchParams, maxBytes: number, view: (item: T) => V = (i) => i as unknown as V
): Page<V> {
  const { limit, cursor } = pageParams(query, maxBytes)
  let after = ''
  if (cursor !== undefined) {
    after = Buffer.from(cursor, 'base64url').toString('utf8')
    if (!/^[a-z]{2,3}_[0-9a-z]{26}$/.test(after)) throw ApiError.validation([{ field: 'cursor', message: 'is not a cursor this API returned' }])
  }
  let start = 0
  if (after !== '') {
    while (start < items.length && items[start]!.id <= after) start++
  }
  const data = items.slice(start, start + limit)
  const shown = data.map(view)
  const n = itemsWithin(shown, maxBytes)
  const hasMore = n < data.length || start + limit < items.length
  return { data: shown.slice(0, n), has_more: hasMore, next_cursor: hasMore ? Buffer.from(data[n - 1]!.id).toString('base64url') : null }
}
