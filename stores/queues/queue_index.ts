import type { Redis } from 'ioredis'
import type { QueueSelector, QueueSelectorKind } from '../../protocol/mod.ts'
import { INDEX_UPDATE_LUA } from './index_update.lua.ts'

/**
 * The index of waiting mail in Redis, named in this file only: mail the engine handed back for a later attempt
 * (deferred, throttled, waiting for its lane or held), by recipient domain, provider and organisation. The engine
 * writes one message's entry each time it hands the message back, and removes it when the message ends; a message
 * that goes out at its first attempt is never written. The keys (`<kind>`: domain, provider, organization):
 *   ob:q:m:<msg_id>              HASH org, seq (its stream sequence), acc (accepted, ms), next (its soonest attempt, ms),
 *                                r:<rcpt> = <domain>\t<provider>\t<next ms>, per waiting recipient
 *   ob:q:depth:<kind>            ZSET group → waiting recipients
 *   ob:q:msgs:<kind>:<group>     ZSET message id → accepted (ms): how many messages, and the oldest
 *   ob:q:next:<kind>:<group>     ZSET message id → its soonest attempt in the group (ms)
 *   ob:q:reply:<kind>            HASH group → <ms>\t<the last deferral reply heard>
 * Every key expires 7 days after its last write, like the delivery state: what a dead engine left is forgotten.
 * Reading a page costs a few commands per group listed, whatever the size of the queues.
 */
export const QUEUE_INDEX_TTL_MS = 7 * 24 * 3600_000
/** A reply is kept to this many characters. */
const MAX_REPLY = 300

const messageKey = (id: string): string => `ob:q:m:${id}`
const depthKey = (kind: QueueSelectorKind): string => `ob:q:depth:${kind}`
const msgsKey = (s: QueueSelector): string => `ob:q:msgs:${s.by}:${s.value}`
const nextKey = (s: QueueSelector): string => `ob:q:next:${s.by}:${s.value}`
const replyKey = (kind: QueueSelectorKind): string => `ob:q:reply:${kind}`

/** One waiting recipient of a message as the engine hands it back. */
export interface WaitingRecipient { rcpt: string, domain: string, provider?: string, nextAt: number, reply?: string }

export interface QueueIndexEntry {
  /** The message's organisation, its stream sequence now and when it was accepted (ms). */
  org: string
  seq: number
  acceptedAt: number
  waiting: readonly WaitingRecipient[]
}

/** One queue as operators read it. */
export interface QueueSummary {
  by: QueueSelectorKind
  value: string
  recipients: number
  messages: number
  oldest_accepted_at: string | null
  next_attempt_at: string | null
  last_reply: { at: string, text: string } | null
}

/** A waiting message, for the operator actions that wake it. */
export interface WaitingMessage { id: string, seq: number, nextAt: number }

type IndexRedis = Redis & { ob_queue_index: (numKeys: number, ...args: Array<string | number>) => Promise<number> }

const iso = (ms: number | undefined): string | null => (ms === undefined || !Number.isFinite(ms) ? null : new Date(ms).toISOString())

export class QueueIndex {
  private readonly r: IndexRedis

  constructor (redis: Redis) {
    const r = redis as IndexRedis
    if (typeof (r as Partial<IndexRedis>).ob_queue_index !== 'function') redis.defineCommand('ob_queue_index', { lua: INDEX_UPDATE_LUA })
    this.r = r
  }

  /** Replaces what the index holds for the message; no waiting recipient removes it. */
  async update (id: string, e: QueueIndexEntry, now = Date.now()): Promise<void> {
    const args: Array<string | number> = [id, e.org, e.seq, e.acceptedAt, QUEUE_INDEX_TTL_MS, now, e.waiting.length]
    for (const w of e.waiting) {
      args.push(w.rcpt, w.domain, w.provider ?? '', Math.round(w.nextAt), (w.reply ?? '').slice(0, MAX_REPLY))
    }
    await this.r.ob_queue_index(1, messageKey(id), ...args)
  }

  /** The page of queues of one kind, deepest first, from `offset`; `total` counts every queue of the kind. */
  async list (kind: QueueSelectorKind, offset: number, limit: number): Promise<{ data: QueueSummary[], total: number }> {
    const [page, total] = await Promise.all([
      this.r.zrevrange(depthKey(kind), offset, offset + limit - 1, 'WITHSCORES'),
      this.r.zcard(depthKey(kind))
    ])
    const groups: Array<{ value: string, recipients: number }> = []
    for (let i = 0; i < page.length; i += 2) groups.push({ value: page[i]!, recipients: Number(page[i + 1]) })
    const pipe = this.r.pipeline()
    for (const g of groups) {
      const s = { by: kind, value: g.value }
      pipe.zcard(msgsKey(s)).zrange(msgsKey(s), '0', '0', 'WITHSCORES').zrange(nextKey(s), '0', '0', 'WITHSCORES')
        .hget(replyKey(kind), g.value)
    }
    const replies = groups.length === 0 ? [] : (await pipe.exec()) ?? []
    const data = groups.map((g, i): QueueSummary => {
      const at = (k: number): unknown => replies[4 * i + k]?.[1]
      const oldest = at(1) as string[] | undefined
      const next = at(2) as string[] | undefined
      const reply = at(3) as string | null | undefined
      const tab = typeof reply === 'string' ? reply.indexOf('\t') : -1
      return {
        by: kind,
        value: g.value,
        recipients: g.recipients,
        messages: Number(at(0) ?? 0),
        oldest_accepted_at: iso(oldest?.[1] !== undefined ? Number(oldest[1]) : undefined),
        next_attempt_at: iso(next?.[1] !== undefined ? Number(next[1]) : undefined),
        last_reply: tab > 0 ? { at: iso(Number(reply!.slice(0, tab)))!, text: reply!.slice(tab + 1) } : null
      }
    })
    return { data, total }
  }

  /** The ids of up to `limit` waiting messages of a queue, oldest first. */
  async waitingIds (s: QueueSelector, limit: number): Promise<string[]> {
    return await this.r.zrange(msgsKey(s), '0', String(limit - 1))
  }

  /** Where each of these messages waits (its stream sequence) and its soonest attempt; one no longer indexed is left out. */
  async waiting (ids: readonly string[]): Promise<WaitingMessage[]> {
    if (ids.length === 0) return []
    const pipe = this.r.pipeline()
    for (const id of ids) pipe.hmget(messageKey(id), 'seq', 'next')
    const rows = (await pipe.exec()) ?? []
    const out: WaitingMessage[] = []
    ids.forEach((id, i) => {
      const [seq, next] = (rows[i]?.[1] as Array<string | null> | undefined) ?? []
      if (seq != null && next != null) out.push({ id, seq: Number(seq), nextAt: Number(next) })
    })
    return out
  }
}
