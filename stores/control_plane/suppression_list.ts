import { ERASED_ADDRESS_PREFIX, erasedAddress, isBroadcast, sha256Hex, type SuppressionRecord } from '../../protocol/mod.ts'
import type { JetStreamManager } from '@nats-io/jetstream'
import { KvConflictError, type KvMirror } from './kv_mirror.ts'
import { forgetDeletedKey } from './kv_forget.ts'
import { SuppressionIndex, isActive, type SuppressionFilter, type SuppressionReason } from './suppression_index.ts'

/** What a new entry says besides its address and reason. */
export interface SuppressionDetails {
  messageId?: string
  /** ISO 8601 in UTC (`toISOString`), so that it orders as a string; manual entries only. */
  expiresAt?: string
  /** A broadcast stream the entry applies to alone; absent (or `transactional`): every stream. */
  stream?: string
}

/** How many writes of `addMany` are in flight together. */
const WRITES_IN_FLIGHT = 32

/**
 * Suppression entries are keyed by a hash so any address fits KV's key alphabet. An entry of one broadcast stream
 * hashes the stream with the address (a space between: no address holds one), so it never collides with the
 * address's entry for every stream.
 */
export function suppressionKey (orgId: string, email: string, stream?: string): string {
  const address = email.trim().toLowerCase()
  return `${orgId}.${sha256Hex(isBroadcast(stream) ? `${stream!} ${address}` : address).slice(0, 40)}`
}

/**
 * The suppression lists of every organisation: the KV mirror (one entry per organisation and address) with an
 * index per organisation kept in step by the watch. An entry past its `expires_at` is absent to every reader at
 * once; `sweep` removes it from the store later.
 */
export class SuppressionList {
  private readonly index: SuppressionIndex
  /** Per organisation, how many entries hold an erased address's keyed hash: only those organisations pay for a hash. */
  private readonly hashed = new Map<string, number>()
  /**
   * Per `<org_id> <stream>`, how many entries of that broadcast stream alone the list holds: whether an organisation
   * still has entries of a stream it deleted is one look-up (a reader filtering by that stream accepts it).
   */
  private readonly ofStream = new Map<string, number>()

  /** `erasedKey`: the key of erased addresses' hashes (protocol/privacy.ts), derived from the installation secret. */
  constructor (readonly mirror: KvMirror<SuppressionRecord>, private readonly erasedKey?: Buffer) {
    this.index = SuppressionIndex.of(mirror.all())
    for (const [, r] of mirror.all()) this.countEntry(r, 1)
    // registered in the same turn as the index was built from the mirror: no change falls between them
    mirror.onChange((key, value, old) => {
      if (old !== undefined) { this.index.remove(key, old); this.countEntry(old, -1) }
      if (value !== undefined) { this.index.put(key, value); this.countEntry(value, 1) }
    })
  }

  private countEntry (r: SuppressionRecord, by: 1 | -1): void {
    this.countHashed(r, by)
    if (r.stream !== undefined) {
      const k = `${r.org_id} ${r.stream}`
      const n = (this.ofStream.get(k) ?? 0) + by
      if (n <= 0) this.ofStream.delete(k)
      else this.ofStream.set(k, n)
    }
  }

  /** Whether the organisation's list holds an entry of that broadcast stream alone (expired ones until swept). */
  hasStreamEntries (orgId: string, stream: string): boolean {
    return this.ofStream.has(`${orgId} ${stream}`)
  }

  private countHashed (r: SuppressionRecord, by: 1 | -1): void {
    if (!r.email.startsWith(ERASED_ADDRESS_PREFIX)) return
    const n = (this.hashed.get(r.org_id) ?? 0) + by
    if (n <= 0) this.hashed.delete(r.org_id)
    else this.hashed.set(r.org_id, n)
  }

  /**
   * The organisation's entry for the address (for every stream, or given a broadcast stream, its own), expired or not:
   * the one holding it in clear, else the one holding its keyed hash (an address erased with `keep_suppressed`).
   */
  entry (orgId: string, email: string, stream?: string): SuppressionRecord | undefined {
    const clear = this.mirror.get(suppressionKey(orgId, email, stream))
    if (clear !== undefined || this.erasedKey === undefined || !this.hashed.has(orgId)) return clear
    return this.mirror.get(suppressionKey(orgId, erasedAddress(this.erasedKey, email), stream))
  }

  /** The address's keyed hash, `erased:<hex>`, as a hashed entry holds it. */
  erasedForm (email: string): string {
    if (this.erasedKey === undefined) throw new Error('no key for erased addresses')
    return erasedAddress(this.erasedKey, email)
  }

  /**
   * Erases the address from the organisation's list: its entries (for every stream and for single broadcast streams,
   * active or expired) are deleted and, with `keepHashed`, replaced by one for every stream holding the address's
   * keyed hash instead, with the reason of the entry for every stream (`manual` when there was none), so sends to the
   * address are still refused. The delete markers the bucket keeps under the deleted entries' keys (a SHA-256 of the
   * address, so anyone can derive them from the address) are removed too (kv_forget.ts), and the one under the key for
   * every stream also when no entry is there (a suppression lifted before the erase). Resolves with how many
   * entries holding the address were deleted, how many of their markers were removed, and whether a hashed entry is
   * in force.
   */
  async erase (
    jsm: JetStreamManager, orgId: string, email: string, keepHashed: boolean
  ): Promise<{ removed: number, markersRemoved: number, hashed: boolean }> {
    const address = email.trim().toLowerCase()
    const existing = this.entriesOf(orgId, address)
    let hashed = false
    if (keepHashed) {
      const everyStream = existing.find((r) => !isBroadcast(r.stream))
      const reason = everyStream !== undefined && isActive(everyStream, new Date().toISOString()) ? everyStream.reason : 'manual'
      await this.add(orgId, this.erasedForm(address), reason)
      hashed = true
    }
    const keys = new Set([suppressionKey(orgId, address)])
    for (const r of existing) {
      const key = suppressionKey(orgId, r.email, r.stream)
      await this.mirror.delete(key)
      keys.add(key)
    }
    // the key for every stream also when no entry is there: a suppression lifted by hand left its marker
    let markersRemoved = 0
    for (const key of keys) if (await forgetDeletedKey(jsm, this.mirror.kv, key) === 'removed') markersRemoved++
    return { removed: existing.length, markersRemoved, hashed }
  }

  /** Every entry of the organisation holding the address, expired ones too: for every stream first, then per stream. */
  entriesOf (orgId: string, email: string): SuppressionRecord[] {
    return this.index.ofAddress(orgId, email)
  }

  /** The organisation's entry for the address while it suppresses (not past its expiry). */
  active (orgId: string, email: string, now = Date.now(), stream?: string): SuppressionRecord | undefined {
    const r = this.entry(orgId, email, stream)
    return r !== undefined && isActive(r, new Date(now).toISOString()) ? r : undefined
  }

  /**
   * Whether a send to the address is suppressed: by the entry for every stream, or, on a broadcast stream, by that
   * stream's own entry. A transactional send reads one entry; a broadcast send two.
   */
  isSuppressed (orgId: string, email: string, now = Date.now(), stream?: string): boolean {
    const live = (r: SuppressionRecord | undefined): boolean =>
      r !== undefined && (r.expires_at === undefined || Date.parse(r.expires_at) > now)
    return live(this.entry(orgId, email)) || (isBroadcast(stream) && live(this.entry(orgId, email, stream)))
  }

  /** A page of the organisation's active entries in address order after `after` (SuppressionIndex.page). */
  page (orgId: string, opts: { after?: string, limit: number, filter?: SuppressionFilter, now?: number }):
  { items: SuppressionRecord[], more: boolean } {
    return this.index.page(orgId, { ...opts, nowIso: new Date(opts.now ?? Date.now()).toISOString() })
  }

  /** Every entry of the organisation, expired ones included. */
  all (orgId: string): SuppressionRecord[] {
    return this.index.all(orgId)
  }

  count (orgId: string): number {
    return this.index.count(orgId)
  }

  /**
   * Adds the address unless an active entry holds it, which is kept as it is (its first reason and date are what
   * users want to see); an expired entry is replaced. Every write is a create or a compare-and-set, so of two
   * writers at once the first one's entry stays. Resolves with the entry in force and whether this call wrote it.
   */
  async add (orgId: string, email: string, reason: SuppressionReason, details: SuppressionDetails = {}):
  Promise<{ record: SuppressionRecord, created: boolean }> {
    const key = suppressionKey(orgId, email, details.stream)
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = this.mirror.get(key)
      if (existing !== undefined && isActive(existing, new Date().toISOString())) return { record: existing, created: false }
      const record = newRecord(orgId, email, reason, details)
      try {
        if (existing === undefined) await this.mirror.create(key, record)
        else await this.mirror.update(key, record, this.mirror.revision(key)!)
        return { record, created: true }
      } catch (err) {
        if (!(err instanceof KvConflictError)) throw err
        // another writer got there first: its entry is in the mirror within the watch latency
        await new Promise((resolve) => setTimeout(resolve, 20 * (attempt + 1)))
      }
    }
    const raced = this.mirror.get(key)
    if (raced !== undefined) return { record: raced, created: false }
    throw new KvConflictError(key)
  }

  /**
   * Adds many addresses of one organisation, WRITES_IN_FLIGHT writes at a time as a sliding window (pipelined on
   * the connection, no round trip waited for between them), then waits once for this mirror to hold them all.
   * The window is small so that other requests' callbacks never queue behind more than a few dozen of the
   * import's. Entries already active are left as they are. An entry with a broadcast `stream` is that stream's own,
   * beside the address's entry for every stream. Resolves with whether each entry was added and, when a write
   * failed (a full store), its error: the writes stop there, and the entries added before it stay.
   */
  async addMany (
    orgId: string, entries: ReadonlyArray<{ email: string, reason: SuppressionReason, expiresAt?: string, stream?: string }>
  ): Promise<{ added: boolean[], error?: unknown }> {
    const added = new Array<boolean>(entries.length).fill(false)
    let next = 0
    let last = 0
    let error: unknown
    const writer = async (): Promise<void> => {
      while (next < entries.length && error === undefined) {
        const i = next++
        const e = entries[i]!
        const key = suppressionKey(orgId, e.email, e.stream)
        const existing = this.mirror.get(key)
        const details: SuppressionDetails = {
          ...(e.expiresAt !== undefined ? { expiresAt: e.expiresAt } : {}), ...(e.stream !== undefined ? { stream: e.stream } : {})
        }
        if (existing === undefined) {
          const revision = await this.mirror.createUnseen(key, newRecord(orgId, e.email, e.reason, details))
          if (revision !== undefined) {
            added[i] = true
            last = Math.max(last, revision)
          }
        } else if (!isActive(existing, new Date().toISOString())) {
          added[i] = (await this.add(orgId, e.email, e.reason, details)).created
        }
      }
    }
    // The first write that fails stops the others taking more; those in flight end, and what was written stays.
    await Promise.all(Array.from({ length: WRITES_IN_FLIGHT }, async () => { await writer().catch((err: unknown) => { error ??= err }) }))
    await this.mirror.waitFor(last)
    return error === undefined ? { added } : { added, error }
  }

  /** Removes the organisation's entry for the address (of one stream, given one); false when it held none active. */
  async remove (orgId: string, email: string, stream?: string): Promise<boolean> {
    if (this.active(orgId, email, Date.now(), stream) === undefined) return false
    await this.mirror.delete(suppressionKey(orgId, email, stream))
    return true
  }

  /**
   * Deletes the entries past their expiry. Each delete holds only if the entry is still the one that expired (a
   * later suppression of the address replaced it, or another process swept it first: left alone). Returns how
   * many this call deleted.
   */
  async sweep (now = Date.now()): Promise<number> {
    let deleted = 0
    for (const key of this.index.expiredKeys(new Date(now).toISOString())) {
      const revision = this.mirror.revision(key)
      if (revision === undefined) continue
      if (await this.mirror.deleteIfUnchanged(key, revision)) deleted++
    }
    return deleted
  }
}

function newRecord (orgId: string, email: string, reason: SuppressionReason, details: SuppressionDetails): SuppressionRecord {
  return {
    org_id: orgId,
    email: email.trim().toLowerCase(),
    reason,
    ...(details.messageId !== undefined ? { message_id: details.messageId } : {}),
    created_at: new Date().toISOString(),
    ...(details.expiresAt !== undefined ? { expires_at: details.expiresAt } : {}),
    ...(isBroadcast(details.stream) ? { stream: details.stream } : {})
  }
}
