import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream'
import { STREAM_AUDIT, auditSubject, newId } from '../../protocol/mod.ts'
import { deleteIfStored, type JsPublish } from '../clients/mod.ts'

/**
 * Who made a change: an organisation's API key, or the operator: by an operator key (`opk_…`), or through the
 * command line (`via: 'cli'`, `id` then `cli:<local user name>`: the command line holds no key).
 */
export interface AuditActor { type: 'api_key' | 'operator', id: string, via?: 'cli' }

/** One recorded change, as GET /v1/audit-log shows it. */
export interface AuditEntry {
  /** `aud_…`; sorts by time. */
  id: string
  /** The organisation the change concerns; null for an operator change of the installation (egress sources, pools, limits). */
  org_id: string | null
  actor: AuditActor
  /** The client address of the request; for a change made through the command line, the host name it ran on. */
  address: string
  at: string
  action: string
  /** The id (or name, or address) of what was changed; null when the organisation itself is the target. */
  target: string | null
  /** Field names and their new, non-secret values. */
  changes: Record<string, unknown>
  /** Items one change touched (a bulk change is one entry); 1 for a single change. */
  count: number
  request_id: string
  /**
   * When an erase (POST /v1/privacy/erase) replaced an address this entry named with the address's keyed hash: the
   * entry was stored again then, so it is read at that place in the log, with its own `id` and `at`.
   */
  rewritten_at?: string
}

/** What a caller gives to record: the entry without its id and time, which the log assigns. */
export type AuditRecord = Omit<AuditEntry, 'id' | 'at'> & { at?: string }

/** What a read keeps: every filter is optional and they combine. */
export interface AuditFilter {
  action?: string
  actor?: string
  target?: string
  /** Inclusive bounds, in ms since the epoch. */
  sinceMs?: number
  untilMs?: number
}

export interface AuditPage {
  data: AuditEntry[]
  /** The stream sequence of each entry of `data`: a cursor continues below one. */
  seqs: number[]
  /** The sequence to continue below (exclusive) when more may exist; undefined when the log is read to its start. */
  nextBefore?: number
}

/** A read looks at most this many of one scope's entries; past it the page ends early, with a cursor to go on. */
export const AUDIT_SCAN_MAX = 2000
/** The first backward window, in stream sequences; each further window is four times wider. */
const FIRST_WINDOW = 256

/**
 * The audit log in the stream OB_AUDIT (protocol/jetstream_streams.ts): one JSON entry per change on
 * `ob.audit.<scope>`, the scope an organisation id or `operator`. Entries are never removed by Outbox, and rewritten
 * only by an erase (`eraseAddress`); the stream's `max_age` (OB_AUDIT_RETENTION_DAYS), its per-scope cap and its byte
 * share (`discard: old`) age them out. Reads go newest first through direct gets on the scope's own subject, so a read's cost follows that
 * scope's entries, not the stream's. This module is the only one that knows the layout.
 */
export class AuditLog {
  constructor (private readonly jsm: JetStreamManager, private readonly pub: JsPublish) {}

  /** Resolves once JetStream stored the entry; throws the publisher's error otherwise. */
  async record (r: AuditRecord): Promise<AuditEntry> {
    const now = Date.now()
    const entry: AuditEntry = { id: newId('aud', now), ...r, at: r.at ?? new Date(now).toISOString() }
    await this.pub.publish(auditSubject(entry.org_id ?? 'operator'), Buffer.from(JSON.stringify(entry)), { msgID: entry.id })
    return entry
  }

  /**
   * Up to `limit` entries of `scope` below sequence `before` (or from the newest), newest first, that pass
   * `filter`. Walks back in windows of sequences, each read forward with `next_by_subj`, so only the scope's own
   * entries are fetched; stops after AUDIT_SCAN_MAX entries looked at, or at `sinceMs`.
   */
  async list (scope: string, filter: AuditFilter, limit: number, before?: number): Promise<AuditPage> {
    const subject = auditSubject(scope)
    const first = await this.jsm.direct.getMessage(STREAM_AUDIT, { seq: 1, next_by_subj: subject })
    if (first === null) return { data: [], seqs: [] }
    let upper = before
    if (upper === undefined) {
      const last = await this.jsm.direct.getMessage(STREAM_AUDIT, { last_by_subj: subject })
      if (last === null) return { data: [], seqs: [] }
      upper = last.seq + 1
    }
    const data: AuditEntry[] = []
    const seqs: number[] = []
    let scanned = 0
    let width = FIRST_WINDOW
    while (upper > first.seq) {
      const lower = Math.max(first.seq, upper - width)
      const window = await this.forward(subject, lower, upper)
      for (let i = window.length - 1; i >= 0; i--) {
        const { seq, entry } = window[i]!
        scanned++
        const ms = Date.parse(entry.at)
        if (filter.sinceMs !== undefined && ms < filter.sinceMs) {
          // a rewritten entry sits where it was stored again, after newer ones: the older ones below still count
          if (entry.rewritten_at !== undefined) continue
          return { data, seqs }
        }
        if (passes(entry, filter, ms)) {
          data.push(entry)
          seqs.push(seq)
          if (data.length === limit) return seq > first.seq ? { data, seqs, nextBefore: seq } : { data, seqs }
        }
        if (scanned >= AUDIT_SCAN_MAX) return seq > first.seq ? { data, seqs, nextBefore: seq } : { data, seqs }
      }
      upper = lower
      width *= 4
    }
    return { data, seqs }
  }

  /**
   * Replaces `address` (bare, lower-cased; in any case) wherever the scope's entries name it, as target or in their
   * changes, with `replacement` (the address's keyed hash): each such entry is stored again with `rewritten_at`, then
   * its old message is deleted by sequence (the server overwrites its bytes). Reads every entry of the scope once, one
   * direct get each, and no other scope's. Resolves with how many entries were rewritten.
   */
  async eraseAddress (scope: string, address: string, replacement: string, now = new Date()): Promise<number> {
    const subject = auditSubject(scope)
    const last = await this.jsm.direct.getMessage(STREAM_AUDIT, { last_by_subj: subject })
    if (last === null) return 0
    const named = new RegExp(address.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'gi')
    let rewritten = 0
    let at = 1
    while (at <= last.seq) {
      const m: StoredMsg | null = await this.jsm.direct.getMessage(STREAM_AUDIT, { seq: at, next_by_subj: subject })
      if (m === null || m.seq > last.seq) break
      at = m.seq + 1
      const text = m.string()
      if (!text.toLowerCase().includes(address)) continue
      const entry: AuditEntry = { ...JSON.parse(text.replace(named, replacement)) as AuditEntry, rewritten_at: now.toISOString() }
      // stored again first, so a failure between the two steps leaves the entry twice, never lost
      await this.pub.publish(subject, Buffer.from(JSON.stringify(entry)), { msgID: `${entry.id}:rewritten:${m.seq}` })
      if (await deleteIfStored(this.jsm, STREAM_AUDIT, m.seq, { overwrite: true })) rewritten++
    }
    return rewritten
  }

  /** The scope's entries with a sequence in [lower, upper), oldest first. */
  private async forward (subject: string, lower: number, upper: number): Promise<Array<{ seq: number, entry: AuditEntry }>> {
    const out: Array<{ seq: number, entry: AuditEntry }> = []
    let at = lower
    while (at < upper) {
      const m: StoredMsg | null = await this.jsm.direct.getMessage(STREAM_AUDIT, { seq: at, next_by_subj: subject })
      if (m === null || m.seq >= upper) break
      out.push({ seq: m.seq, entry: m.json<AuditEntry>() })
      at = m.seq + 1
    }
    return out
  }
}

function passes (e: AuditEntry, f: AuditFilter, ms: number): boolean {
  if (f.action !== undefined && e.action !== f.action) return false
  if (f.actor !== undefined && e.actor.id !== f.actor) return false
  if (f.target !== undefined && e.target !== f.target) return false
  if (f.untilMs !== undefined && ms > f.untilMs) return false
  return true
}
