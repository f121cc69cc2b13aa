import type { Redis } from 'ioredis'
import { ApiError, ListBudget } from '../../protocol/mod.ts'

/** A position in a sorted-set index: the score (time in ms) and member (id) of the last item returned. */
export interface IndexPosition { score: number, id: string }

export interface IndexPage<T> { data: T[], has_more: boolean, next_cursor: string | null }

/** A filtered page stops scanning after this many index entries and hands back a cursor to continue from. */
const SCAN_BUDGET = 1000
const FILTERED_BATCH = 50
const CURSOR = /^(\d{1,16}):([a-z]{2,3}_[0-9a-z]{26})$/

export function encodeCursor (p: IndexPosition): string {
  return Buffer.from(`${p.score}:${p.id}`).toString('base64url')
}

/** Cursors are opaque to clients; anything this API did not hand out is a 400 naming `cursor`. */
export function decodeCursor (cursor: string): IndexPosition {
  const m = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (m === null) throw ApiError.validation([{ field: 'cursor', message: 'is not a cursor this API returned' }])
  return { score: Number(m[1]), id: m[2]! }
}

/** WITHSCORES replies come flat (`[id, score, …]`) or as pairs (`[[id, score], …]`) depending on the protocol. */
function pairs (reply: unknown[]): IndexPosition[] {
  const out: IndexPosition[] = []
  if (reply.length > 0 && Array.isArray(reply[0])) {
    for (const p of reply as Array<[string, string]>) out.push({ id: String(p[0]), score: Number(p[1]) })
    return out
  }
  for (let i = 0; i + 1 < reply.length; i += 2) out.push({ id: String(reply[i]), score: Number(reply[i + 1]) })
  return out
}

/**
 * Up to `count` entries after `pos` in newest-first order (score descending, then id descending).
 * Entries that share the cursor's score are read separately so that a page boundary inside one
 * millisecond neither repeats nor skips anything.
 */
async function rangeAfter (
  redis: Redis, key: string, pos: IndexPosition | undefined, count: number, maxScore?: number
): Promise<IndexPosition[]> {
  if (pos === undefined) {
    const top = maxScore === undefined ? '+inf' : String(Math.floor(maxScore))
    return pairs(await redis.call('ZRANGE', key, top, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, count, 'WITHSCORES') as unknown[])
  }
  const [ties, older] = await Promise.all([
    redis.call('ZRANGE', key, pos.score, pos.score, 'BYSCORE', 'WITHSCORES') as Promise<unknown[]>,
    redis.call('ZRANGE', key, `(${pos.score}`, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, count, 'WITHSCORES') as Promise<unknown[]>
  ])
  const sameMs = pairs(ties).filter((p) => p.id < pos.id).reverse()
  return sameMs.concat(pairs(older)).slice(0, count)
}

/**
 * Pages a newest-first index. `load` turns ids into items, or `undefined` for entries to skip (expired,
 * or not matching a filter the index does not cover). A page may hold fewer than `limit` items when a
 * filter skipped many entries; `has_more` and `next_cursor` still say where to continue. `maxScore` leaves out
 * entries scored above it. `maxBytes` bounds the page's JSON body (OB_API_LIST_MAX_BYTES): a page stops before the
 * item that would pass it, with `has_more` and a cursor after the last item taken.
 */
export async function pageIndex<T> (
  redis: Redis, key: string, opts: { limit: number, cursor?: string, filtered: boolean, maxScore?: number, maxBytes?: number },
  load: (ids: string[]) => Promise<Array<T | undefined>>
): Promise<IndexPage<T>> {
  const { limit } = opts
  let pos = opts.cursor === undefined ? undefined : decodeCursor(opts.cursor)
  const out: Array<{ item: T, pos: IndexPosition }> = []
  let scanned = 0
  const budget = opts.maxBytes === undefined ? undefined : new ListBudget(opts.maxBytes)
  for (;;) {
    const need = limit + 1 - out.length
    const want = opts.filtered ? Math.max(need, FILTERED_BATCH) : need
    const batch = await rangeAfter(redis, key, pos, want, opts.maxScore)
    const items = batch.length === 0 ? [] : await load(batch.map((b) => b.id))
    for (let i = 0; i < batch.length; i++) {
      pos = batch[i]!
      scanned++
      const item = items[i]
      if (item === undefined) continue
      if (out.length < limit && budget !== undefined && !budget.take(item)) {
        return { data: out.map((o) => o.item), has_more: true, next_cursor: encodeCursor(out[out.length - 1]!.pos) }
      }
      out.push({ item, pos })
      if (out.length > limit) {
        return { data: out.slice(0, limit).map((o) => o.item), has_more: true, next_cursor: encodeCursor(out[limit - 1]!.pos) }
      }
    }
    if (batch.length < want) return { data: out.map((o) => o.item), has_more: false, next_cursor: null }
    if (scanned >= SCAN_BUDGET) return { data: out.map((o) => o.item), has_more: true, next_cursor: encodeCursor(pos!) }
  }
}
