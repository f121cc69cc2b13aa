import { readFileSync } from 'node:fs'
import type { Redis } from 'ioredis'
import { ApiError, bareAddress, type QueuedMessage, envelopeOf, statusAfter, type EventRecord, type MessageStatus, STATUS_RANK } from '../../protocol/mod.ts'
import { ScriptBatch } from '../clients/mod.ts'
import { READ_MODEL_KEYS as K, READ_MODEL_RETENTION_MS, STATS_RETENTION_MS, hourBucket } from './message_store_keys.ts'
import { pageIndex, type IndexPage } from './index_page.ts'
import { statsOver, type StatsResult, type StatsInterval } from './message_stats.ts'
import { eventTagKeys, eventTags, hasTag, messageTagKeys } from './tag_index.ts'

export { STATS_COUNTERS, type StatsCounts, type StatsInterval, type StatsResult } from './message_stats.ts'
export { STATS_MAX_RANGE_MS, READ_MODEL_RETENTION_MS, STATS_RETENTION_MS } from './message_store_keys.ts'
export type { IndexPage } from './index_page.ts'

const RECORD_LUA = readFileSync(new URL('../../../stores/read_model/record_queued.lua', import.meta.url), 'utf8')
const RECORD_FINISH_LUA = readFileSync(new URL('../../../stores/read_model/record_queued_finish.lua', import.meta.url), 'utf8')
const APPLY_LUA = readFileSync(new URL('../../../stores/read_model/apply_event.lua', import.meta.url), 'utf8')

/** Events shown inline by GET /v1/messages/{id}: the most recent ones; GET /v1/events pages through all. */
export const MESSAGE_EVENTS_INLINE = 100

export interface EventEnvelope { id: string, type: string, timestamp: string, data: Record<string, unknown> }

export interface MessageSummary {
  id: string
  from: string
  to: string[]
  cc: string[]
  bcc: string[]
  subject: string
  status: MessageStatus
  environment: 'live' | 'test'
  created_at: string
  scheduled_at?: string
  metadata: Record<string, string>
  tags: string[]
}

export interface MessageDetail extends MessageSummary { events: EventEnvelope[] }

export interface MessageRecipients { orgId: string, environment: 'live' | 'test', recipients: string[], tags: string[] }

type StoreRedis = Redis & {
  ob_apply_event: (numKeys: number, ...args: Array<string | number>) => Promise<number>
}

/** Appends each recipient's index key once; the first four keys of a record are never recipient indexes. */
function addRecipientIndexes (keys: string[], org: string, addresses: readonly string[]): void {
  for (const a of addresses) {
    const key = K.messagesTo(org, bareAddress(a))
    if (keys.indexOf(key, 4) === -1) keys.push(key)
  }
}

function parseSummary (json: string, status: string): MessageSummary {
  const s = JSON.parse(json) as Omit<MessageSummary, 'status'> & { org_id?: string }
  const { org_id: _org, ...rest } = s
  // Messages recorded before tags existed have none.
  return { ...rest, tags: rest.tags ?? [], status: status as MessageStatus }
}

type Keep<T> = ((item: T) => boolean) | undefined

/** Both filters, or whichever is given. */
function both<T> (a: Keep<T>, b: Keep<T>): Keep<T> {
  if (a === undefined) return b
  if (b === undefined) return a
  return (item) => a(item) && b(item)
}

/**
 * The index a message listing reads (recipient, else tag, else status, else all) and the filters it leaves to
 * checking each item, which cost a scan bounded by pageIndex's budget.
 */
function messageIndex (orgId: string, q: { status?: MessageStatus, to?: string, tag?: string }): { key: string, keep: Keep<MessageSummary> } {
  const byStatus: Keep<MessageSummary> = q.status === undefined ? undefined : (m) => m.status === q.status
  const byTag: Keep<MessageSummary> = q.tag === undefined ? undefined : (m) => hasTag(m.tags, q.tag!)
  if (q.to !== undefined) return { key: K.messagesTo(orgId, bareAddress(q.to)), keep: both(byStatus, byTag) }
  if (q.tag !== undefined) return { key: K.messagesTagged(orgId, q.tag), keep: byStatus }
  if (q.status !== undefined) return { key: K.messagesByStatus(orgId, q.status), keep: undefined }
  return { key: K.messages(orgId), keep: undefined }
}

/** The same for events: message, else tag, else type, else all. */
function eventIndex (orgId: string, q: { message_id?: string, type?: string, tag?: string }): { key: string, keep: Keep<EventEnvelope> } {
  const byType: Keep<EventEnvelope> = q.type === undefined ? undefined : (e) => e.type === q.type
  const byTag: Keep<EventEnvelope> = q.tag === undefined ? undefined : (e) => hasTag(e.data.tags, q.tag!)
  if (q.message_id !== undefined) return { key: K.messageEvents(orgId, q.message_id), keep: both(byType, byTag) }
  if (q.tag !== undefined) return { key: K.eventsTagged(orgId, q.tag), keep: byType }
  if (q.type !== undefined) return { key: K.eventsByType(orgId, q.type), keep: undefined }
  return { key: K.events(orgId), keep: undefined }
}

/**
 * The read model of messages (status, events, statistics) kept in Redis: a projection of the durable
 * event stream. The gateway records a message after its 202, the engine again when it delivers it; the projector
 * applies every event from the event stream. Multi-key updates are Lua scripts sent by EVALSHA.
 */
export class MessageStore {
  private readonly r: StoreRedis
  private readonly queued: ScriptBatch<number>

  constructor (readonly redis: Redis) {
    const r = redis as StoreRedis
    this.queued = new ScriptBatch(redis, 'ob_record_queued_batch', RECORD_LUA, { finish: RECORD_FINISH_LUA })
    if (typeof (r as Partial<StoreRedis>).ob_apply_event !== 'function') redis.defineCommand('ob_apply_event', { lua: APPLY_LUA })
    this.r = r
  }

  /**
   * Called by the gateway after the 202 (batched, see gateway/send/read_model_writer.ts) and by the engine on
   * every delivery of the queued message. Recording the same id twice changes nothing and counts it once. The
   * messages recorded in one event-loop turn go to Redis as one batched script.
   */
  async recordQueued (msg: QueuedMessage, status: 'queued' | 'scheduled'): Promise<void> {
    const created = Date.parse(msg.created_at)
    const createdMs = Number.isFinite(created) ? created : Date.now()
    const summary = JSON.stringify({
      id: msg.id,
      org_id: msg.org_id,
      from: msg.from,
      to: msg.to,
      cc: msg.cc,
      bcc: msg.bcc,
      subject: msg.subject,
      environment: msg.environment,
      created_at: msg.created_at,
      ...(msg.scheduled_at !== undefined ? { scheduled_at: msg.scheduled_at } : {}),
      metadata: msg.metadata,
      tags: msg.tags ?? []
    })
    const org = msg.org_id
    const hour = hourBucket(createdMs)
    const keys = [K.message(org, msg.id), K.messageOwner(msg.id), K.messages(org), K.stats(org, hour)]
    addRecipientIndexes(keys, org, msg.to)
    addRecipientIndexes(keys, org, msg.cc)
    addRecipientIndexes(keys, org, msg.bcc)
    const tagged = messageTagKeys(org, msg.tags, hour)
    keys.push(...tagged.indexes, ...tagged.stats)
    const now = Date.now()
    await this.queued.call(keys, [summary, status, STATUS_RANK[status], createdMs, READ_MODEL_RETENTION_MS,
      now - READ_MODEL_RETENTION_MS, K.messagesByStatusPrefix(org), STATS_RETENTION_MS, msg.id, org, tagged.stats.length])
  }

  /**
   * Applies one event: stores it, indexes it per organisation, per type and per message, moves the message's
   * status by precedence and counts it. Atomic and idempotent by event id: a replay returns false and
   * changes nothing.
   */
  async applyEvent (e: EventRecord): Promise<boolean> {
    const parsed = Date.parse(e.timestamp)
    const ts = Number.isFinite(parsed) ? parsed : Date.now()
    const org = e.org_id
    const mid = e.message_id ?? (typeof e.data.message_id === 'string' ? e.data.message_id : undefined)
    const hour = hourBucket(ts)
    const keys = [K.event(org, e.id), K.events(org), K.eventsByType(org, e.type), K.stats(org, hour)]
    if (mid !== undefined) keys.push(K.message(org, mid), K.messageEvents(org, mid))
    const tags = eventTags(e.data)
    keys.push(...eventTagKeys(org, tags, hour))
    const status = statusAfter(e.type)
    const applied = await this.r.ob_apply_event(keys.length, ...keys,
      JSON.stringify(envelopeOf(e)), ts, e.id, e.type, READ_MODEL_RETENTION_MS, Date.now() - READ_MODEL_RETENTION_MS,
      STATS_RETENTION_MS, status ?? '', status === undefined ? 0 : STATUS_RANK[status], mid ?? '', K.messagesByStatusPrefix(org), tags.length)
    return applied === 1
  }

  /** 404 `not_found` when no organisation has the id, 403 `forbidden` when another one does. */
  async getMessage (orgId: string, id: string): Promise<MessageDetail> {
    const [fields, eventIds] = await Promise.all([
      this.redis.hmget(K.message(orgId, id), 'summary', 'status'),
      this.redis.zrange(K.messageEvents(orgId, id), String(-MESSAGE_EVENTS_INLINE), '-1')
    ])
    const [summary, status] = fields
    if (summary === null || summary === undefined) {
      await this.assertOwner(orgId, id)
      throw new ApiError('not_found', `No message with id ${id}.`)
    }
    const events = await this.loadEvents(orgId, eventIds)
    return { ...parseSummary(summary, status ?? 'queued'), events: events.filter((e) => e !== undefined) }
  }

  /**
   * Which organisation sent a message and to whom (to, cc and bcc, bare and lower-cased), for checking a bounce
   * or complaint against it. Undefined when no message has the id (never sent here, or older than the retention).
   */
  async messageRecipients (id: string): Promise<MessageRecipients | undefined> {
    const orgId = await this.redis.get(K.messageOwner(id))
    if (orgId === null) return undefined
    const summary = await this.redis.hget(K.message(orgId, id), 'summary')
    if (summary === null) return undefined
    const s = JSON.parse(summary) as Pick<MessageSummary, 'to' | 'cc' | 'bcc' | 'environment'> & { tags?: string[] }
    return { orgId, environment: s.environment, recipients: [...s.to, ...s.cc, ...s.bcc].map(bareAddress), tags: s.tags ?? [] }
  }

  /**
   * The tags of the organisation's message, for events made without the message at hand (tracking links):
   * empty when it has none or is not (or no longer) in the read model.
   */
  async messageTags (orgId: string, id: string): Promise<string[]> {
    const summary = await this.redis.hget(K.message(orgId, id), 'summary')
    if (summary === null) return []
    return (JSON.parse(summary) as { tags?: string[] }).tags ?? []
  }

  /** Newest first. `to` matches any recipient (to, cc or bcc), case-insensitively; `tag` one of the message's tags. */
  async listMessages (orgId: string, q: { limit: number, cursor?: string, status?: MessageStatus, to?: string, tag?: string }): Promise<IndexPage<MessageSummary>> {
    const { key, keep } = messageIndex(orgId, q)
    return await pageIndex(this.redis, key, { limit: q.limit, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}), filtered: keep !== undefined }, async (ids) => {
      const rows = await Promise.all(ids.map((id) => this.redis.hmget(K.message(orgId, id), 'summary', 'status')))
      return rows.map(([summary, status]) => {
        // An index entry can outlive its message by up to one write; skip it.
        if (summary === null || summary === undefined) return undefined
        const m = parseSummary(summary, status ?? 'queued')
        return keep === undefined || keep(m) ? m : undefined
      })
    })
  }

  /** Newest first, as webhook envelopes. A `message_id` of another organisation is 403. */
  async listEvents (orgId: string, q: { limit: number, cursor?: string, message_id?: string, type?: string, tag?: string }): Promise<IndexPage<EventEnvelope>> {
    if (q.message_id !== undefined) await this.assertOwner(orgId, q.message_id)
    const { key, keep } = eventIndex(orgId, q)
    return await pageIndex(this.redis, key, { limit: q.limit, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}), filtered: keep !== undefined }, async (ids) => {
      const events = await this.loadEvents(orgId, ids)
      return keep === undefined ? events : events.map((e) => e !== undefined && keep(e) ? e : undefined)
    })
  }

  /** Counts per event type (and `sent`, messages queued) over whole UTC hours overlapping [fromMs, toMs); with `tag`, of its messages only. */
  async stats (orgId: string, fromMs: number, toMs: number, interval?: StatsInterval, tag?: string): Promise<StatsResult> {
    const hashKey = tag === undefined ? (hour: string) => K.stats(orgId, hour) : (hour: string) => K.statsTagged(orgId, tag, hour)
    return await statsOver((hour) => this.redis.hgetall(hashKey(hour)), fromMs, toMs, interval)
  }

  /** Ids and times (ms) of the org's events of these types at or after `fromMs`, oldest first. */
  async eventIdsSince (orgId: string, types: readonly string[], fromMs: number): Promise<Array<{ id: string, ms: number }>> {
    const p = this.redis.pipeline()
    for (const t of types) p.zrangebyscore(K.eventsByType(orgId, t), fromMs, '+inf', 'WITHSCORES')
    const out: Array<{ id: string, ms: number }> = []
    for (const [err, flat] of (await p.exec()) ?? []) {
      if (err !== null) throw err
      const list = flat as string[]
      for (let i = 0; i + 1 < list.length; i += 2) out.push({ id: list[i]!, ms: Number(list[i + 1]) })
    }
    return out.sort((a, b) => a.ms - b.ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  /** Stored events (webhook envelopes as JSON text, the bytes webhooks were sent), undefined where gone. */
  async eventJson (orgId: string, ids: readonly string[]): Promise<Array<string | undefined>> {
    if (ids.length === 0) return []
    return (await this.redis.mget(ids.map((id) => K.event(orgId, id)))).map((v) => v ?? undefined)
  }

  /** Which of `orgIds` holds the event `id` (a 403 rather than a 404 for another organisation's event). */
  async eventOrg (id: string, orgIds: readonly string[]): Promise<string | undefined> {
    if (orgIds.length === 0) return undefined
    const p = this.redis.pipeline()
    for (const org of orgIds) p.exists(K.event(org, id))
    const results = (await p.exec()) ?? []
    const i = results.findIndex(([err, n]) => err === null && n === 1)
    return i < 0 ? undefined : orgIds[i]
  }

  private async loadEvents (orgId: string, ids: string[]): Promise<Array<EventEnvelope | undefined>> {
    if (ids.length === 0) return []
    const raw = await this.redis.mget(ids.map((id) => K.event(orgId, id)))
    return raw.map((json) => json === null ? undefined : JSON.parse(json) as EventEnvelope)
  }

  private async assertOwner (orgId: string, id: string): Promise<void> {
    const owner = await this.redis.get(K.messageOwner(id))
    if (owner !== null && owner !== orgId) throw new ApiError('forbidden', `The message ${id} belongs to another organisation.`)
  }
}
