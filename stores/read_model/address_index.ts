import type { Redis } from 'ioredis'
import { ApiError, ListBudget } from '../../protocol/mod.ts'
import type { IndexPage } from './index_page.ts'

/**
 * The recipient address index: one sorted set per organisation and environment whose members are
 * `<address> NUL <inverted created ms> NUL <message id>`, all at score 0. A prefix of an address is a range of
 * members, read with ZRANGEBYLEX and LIMIT, so `?to=` costs O(log n + page) however many messages there are.
 * Results come in address order, newest first for each address.
 */
const SEP = '\u0000'
const MAX_MS = 1e16
/** A page stops after reading this many entries whose message has expired, and hands back a cursor. */
const STALE_BUDGET = 1000

export function addressIndexMember (address: string, createdMs: number, id: string): string {
  return `${address}${SEP}${String(MAX_MS - createdMs).padStart(16, '0')}${SEP}${id}`
}

function idOf (member: string): string {
  return member.slice(member.lastIndexOf(SEP) + 1)
}

function decodeAddressCursor (cursor: string, prefix: string): string {
  const member = Buffer.from(cursor, 'base64url').toString('utf8')
  if (!member.startsWith(prefix) || member.split(SEP).length !== 3) {
    throw ApiError.validation([{ field: 'cursor', message: 'is not a cursor this API returned for this `to`' }])
  }
  return member
}

/**
 * Pages the messages to addresses starting with `prefix`. `load` turns ids into items, `undefined` for ids to
 * skip (expired, or filtered out); members whose message expired are removed as they are met. `maxBytes` bounds the
 * page's JSON body as in `pageIndex`.
 */
export async function pageAddressIndex<T> (
  redis: Redis, key: string, prefix: string, opts: { limit: number, cursor?: string, maxBytes?: number },
  load: (ids: string[]) => Promise<Array<T | 'expired' | undefined>>
): Promise<IndexPage<T>> {
  const upper = Buffer.concat([Buffer.from('[' + prefix), Buffer.from([0xff])])
  let lower: string = opts.cursor === undefined ? '[' + prefix : '(' + decodeAddressCursor(opts.cursor, prefix)
  const out: Array<{ item: T, member: string }> = []
  let scanned = 0
  const budget = opts.maxBytes === undefined ? undefined : new ListBudget(opts.maxBytes)
  for (;;) {
    const want = Math.max(opts.limit + 1 - out.length, 50)
    const members = await redis.zrangebylex(key, lower, upper, 'LIMIT', 0, want)
    const items = members.length === 0 ? [] : await load(members.map(idOf))
    const expired: string[] = []
    for (let i = 0; i < members.length; i++) {
      const member = members[i]!
      lower = '(' + member
      scanned++
      const item = items[i]
      if (item === 'expired') { expired.push(member); continue }
      if (item === undefined) continue
      if (out.length < opts.limit && budget !== undefined && !budget.take(item)) {
        if (expired.length > 0) await redis.zrem(key, ...expired)
        return { data: out.map((o) => o.item), has_more: true, next_cursor: Buffer.from(out[out.length - 1]!.member).toString('base64url') }
      }
      out.push({ item, member })
      if (out.length > opts.limit) {
        if (expired.length > 0) await redis.zrem(key, ...expired)
        return {
          data: out.slice(0, opts.limit).map((o) => o.item),
          has_more: true,
          next_cursor: Buffer.from(out[opts.limit - 1]!.member).toString('base64url')
        }
      }
    }
    if (expired.length > 0) await redis.zrem(key, ...expired)
    if (members.length < want) return { data: out.map((o) => o.item), has_more: false, next_cursor: null }
    if (scanned >= STALE_BUDGET) {
      return { data: out.map((o) => o.item), has_more: true, next_cursor: Buffer.from(lower.slice(1)).toString('base64url') }
    }
  }
}
