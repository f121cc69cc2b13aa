import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'

export const DEFAULT_PAGE = 20
export const MAX_PAGE = 100

/** `?limit=1..100&cursor=`; every list endpoint uses it (and adds its own filters). */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE })),
  cursor: Type.Optional(Type.String({ maxLength: 200 }))
})

export function pageSchema<T extends ReturnType<typeof Type.Object>> (item: T) {
  return Type.Object({ data: Type.Array(item), has_more: Type.Boolean(), next_cursor: Type.Union([Type.String(), Type.Null()]) })
}

export interface Page<T> { data: T[], has_more: boolean, next_cursor: string | null }

export function pageParams (query: URLSearchParams): { limit: number, cursor?: string } {
  const limit = query.has('limit') ? Number(query.get('limit')) : DEFAULT_PAGE
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw ApiError.validation([{ field: 'limit', message: `must be an integer from 1 to ${MAX_PAGE}` }])
  }
  const cursor = query.get('cursor') ?? undefined
  return cursor === undefined || cursor === '' ? { limit } : { limit, cursor }
}

/**
 * Pages a list already sorted by id (ids sort by creation time). The cursor is the last id returned,
 * base64url-encoded so clients treat it as opaque.
 */
export function pageById<T extends { id: string }> (items: readonly T[], query: URLSearchParams): Page<T> {
  const { limit, cursor } = pageParams(query)
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
  const hasMore = start + limit < items.length
  return { data, has_more: hasMore, next_cursor: hasMore ? Buffer.from(data[data.length - 1]!.id).toString('base64url') : null }
}
