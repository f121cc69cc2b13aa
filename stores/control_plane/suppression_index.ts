import type { SuppressionRecord } from '../../protocol/mod.ts'
import { OrderedList } from './ordered_list.ts'

export type SuppressionReason = SuppressionRecord['reason']

/** What a list or export shows: every field optional; timestamps are ISO 8601 in UTC as records hold them. */
export interface SuppressionFilter {
  reason?: SuppressionReason
  /** created_at at or after this. */
  since?: string
  /** created_at before this. */
  until?: string
  /** Entries that suppress sends on this stream: those for every stream and the stream's own. */
  stream?: string
}

/** The address as it is compared and ordered: trimmed, lower-cased. */
export function addressKey (email: string): string {
  const k = email.trim().toLowerCase()
  // the record's own string when it is already in this form, so the index holds no second copy of it
  return k === email ? email : k
}

/**
 * Where an entry sorts in its organisation's list: its address, then (entries of one broadcast stream) a space and
 * the stream. No address holds a space, so an address's entries sit together, the whole-organisation one first.
 */
export function entryKey (r: Pick<SuppressionRecord, 'email' | 'stream'>): string {
  const k = addressKey(r.email)
  return r.stream === undefined ? k : `${k} ${r.stream}`
}

/** True while the entry suppresses: it has no expiry, or its expiry is after `nowIso`. */
export function isActive (r: SuppressionRecord, nowIso: string): boolean {
  return r.expires_at === undefined || r.expires_at > nowIso
}

function matches (r: SuppressionRecord, f: SuppressionFilter): boolean {
  if (f.reason !== undefined && r.reason !== f.reason) return false
  if (f.since !== undefined && r.created_at < f.since) return false
  if (f.until !== undefined && r.created_at >= f.until) return false
  if (f.stream !== undefined && r.stream !== undefined && r.stream !== f.stream) return false
  return true
}

/**
 * Every organisation's suppressions in address order, one ordered list per organisation, kept in step with the
 * store entry by entry (`put`, `remove`): a page costs a look-up of the organisation, a binary search for the
 * cursor and the entries it returns (plus those a filter passes over, within that organisation only), never a
 * walk or a sort of the whole store. Entries carrying `expires_at` are also kept by key for the expiry sweep.
 */
export class SuppressionIndex {
  private readonly byOrg = new Map<string, OrderedList<SuppressionRecord>>()
  /** store key → expires_at, for entries that carry one (manual entries only: few). */
  private readonly expiring = new Map<string, string>()

  /** An index of `records` built in one pass: grouped, each group sorted once. */
  static of (records: Iterable<readonly [string, SuppressionRecord]>): SuppressionIndex {
    const index = new SuppressionIndex()
    const groups = new Map<string, Array<{ k: string, r: SuppressionRecord }>>()
    for (const [key, r] of records) {
      let g = groups.get(r.org_id)
      if (g === undefined) groups.set(r.org_id, g = [])
      g.push({ k: entryKey(r), r })
      if (r.expires_at !== undefined) index.expiring.set(key, r.expires_at)
    }
    for (const [org, g] of groups) {
      g.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0))
      const keys: string[] = []
      const values: SuppressionRecord[] = []
      for (const { k, r } of g) {
        if (keys[keys.length - 1] === k) { values[values.length - 1] = r; continue }
        keys.push(k)
        values.push(r)
      }
      index.byOrg.set(org, OrderedList.fromSorted(keys, values))
    }
    return index
  }

  /** The store holds `record` under `key` now (added or replaced). */
  put (key: string, record: SuppressionRecord): void {
    let list = this.byOrg.get(record.org_id)
    if (list === undefined) this.byOrg.set(record.org_id, list = new OrderedList())
    list.set(entryKey(record), record)
    if (record.expires_at !== undefined) this.expiring.set(key, record.expires_at)
    else this.expiring.delete(key)
  }

  /** The store no longer holds `record` under `key`. */
  remove (key: string, record: SuppressionRecord): void {
    const list = this.byOrg.get(record.org_id)
    if (list !== undefined) {
      list.delete(entryKey(record))
      if (list.size === 0) this.byOrg.delete(record.org_id)
    }
    this.expiring.delete(key)
  }

  /** Entries of the organisation (expired ones included), whatever their state. */
  count (orgId: string): number {
    return this.byOrg.get(orgId)?.size ?? 0
  }

  /**
   * Up to `limit` active entries of the organisation matching `filter`, in address order after the entry key
   * `after` (entryKey: an address, or an address and a stream); `more` is true when at least one more follows.
   */
  page (orgId: string, opts: { after?: string, limit: number, filter?: SuppressionFilter, nowIso: string }):
  { items: SuppressionRecord[], more: boolean } {
    const items: SuppressionRecord[] = []
    const list = this.byOrg.get(orgId)
    if (list === undefined) return { items, more: false }
    const f = opts.filter ?? {}
    for (const [, r] of list.from(opts.after === undefined ? undefined : addressKey(opts.after))) {
      if (!isActive(r, opts.nowIso) || !matches(r, f)) continue
      if (items.length === opts.limit) return { items, more: true }
      items.push(r)
    }
    return { items, more: false }
  }

  /**
   * The organisation's entries for one address, expired ones included: the one for every stream and each broadcast
   * stream's. They sit together in entry-key order (entryKey), so this costs a binary search and the entries found.
   */
  ofAddress (orgId: string, email: string): SuppressionRecord[] {
    const list = this.byOrg.get(orgId)
    if (list === undefined) return []
    const k = addressKey(email)
    const out: SuppressionRecord[] = []
    const whole = list.get(k)
    if (whole !== undefined) out.push(whole)
    const streams = `${k} `
    for (const [key, r] of list.from(k)) {
      if (!key.startsWith(streams)) break
      out.push(r)
    }
    return out
  }

  /** Every entry of the organisation, expired ones included (for deleting the organisation). */
  all (orgId: string): SuppressionRecord[] {
    const out: SuppressionRecord[] = []
    for (const [, r] of this.byOrg.get(orgId)?.from() ?? []) out.push(r)
    return out
  }

  /** Store keys of entries whose expiry is at or before `nowIso`. */
  expiredKeys (nowIso: string): string[] {
    const out: string[] = []
    for (const [key, at] of this.expiring) if (at <= nowIso) out.push(key)
    return out
  }
}
