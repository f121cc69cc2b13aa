import type { Redis } from 'ioredis'
import {
  addressDomain, ApiError, bareAddress, streamOf, type QueuedMessage, type EventRecord, STATUS_RANK, renderedSubject
} from '../../protocol/mod.ts'
import { ScriptBatch } from '../clients/mod.ts'
import { READ_MODEL_KEYS as K, READ_MODEL_RETENTION_MS, STATS_RETENTION_MS, hourBucket, type Environment } from './message_store_keys.ts'
import { RECIPIENT_STATUS_LUA } from './recipient_status.ts'
import { RECORD_QUEUED_LUA } from './record_queued.lua.ts'
import { RECORD_QUEUED_FINISH_LUA } from './record_queued_finish.lua.ts'
import { APPLY_EVENT_LUA } from './apply_event.lua.ts'
import { SCHEDULE_CHANGE_LUA } from './schedule_change.lua.ts'
import { RECORD_SENT_LUA } from './record_sent.lua.ts'
import { addressIndexMember, pageAddressIndex } from './address_index.ts'
import { recipientStates, recipientAddresses, suppressedRecipients, type SuppressedRecipient } from './recipient_states.ts'
import { pageIndex, type IndexPage } from './index_page.ts'
import { statsOver, type StatsResult, type StatsInterval } from './message_stats.ts'
import { messageTagKeys } from './tag_index.ts'
import { applyCall } from './apply_event_call.ts'
import { eventIdBatches, type EventRef } from './event_pages.ts'
import { eventIndex, messageFilter, messageIndex, type EventQuery, type Keep, type MessageQuery } from './list_index.ts'
import { DEFAULT_STUCK_AFTER_MS } from './due.ts'
import {
  ROW_FIELDS, parseSummary, type Row, MESSAGE_EVENTS_INLINE,
  type EventEnvelope, type MessageDetail, type MessageRecipients, type MessageSummary
} from './message_rows.ts'

export { STATS_COUNTERS, type StatsCounts, type StatsInterval, type StatsResult } from './message_stats.ts'
export { STATS_MAX_RANGE_MS, READ_MODEL_RETENTION_MS, STATS_RETENTION_MS, type Environment } from './message_store_keys.ts'
export type { RecipientState } from './recipient_states.ts'
export type { IndexPage } from './index_page.ts'
export {
  MESSAGE_EVENTS_INLINE, type EventEnvelope, type MessageDetail, type MessageRecipients, type MessageSummary
} from './message_rows.ts'

/** How long an organisation keeps its messages and events in the read model, in ms. */
export type RetentionOf = (orgId: string) => { messagesMs: number, eventsMs: number }
const installationRetention: RetentionOf = () => ({ messagesMs: READ_MODEL_RETENTION_MS, eventsMs: READ_MODEL_RETENTION_MS })

const RECORD_LUA = RECIPIENT_STATUS_LUA + RECORD_QUEUED_LUA
const APPLY_LUA = RECIPIENT_STATUS_LUA + APPLY_EVENT_LUA

type StoreRedis = Redis & {
  ob_schedule_change: (numKeys: number, ...args: Array<string | number>) => Promise<number>
  ob_record_sent: (numKeys: number, ...args: Array<string | number>) => Promise<number>
}

/**
 * The read model of messages (status, events, statistics) kept in Redis: a projection of the durable
 * event stream. The gateway records a message after its 202, the engine again when it delivers it; the projector
 * applies every event from the event stream. Multi-key updates are Lua scripts sent by EVALSHA.
 */
export class MessageStore {
  private readonly r: StoreRedis
  private readonly queued: ScriptBatch<number>
  private readonly applied: ScriptBatch<number>

  /**
   * `stuckAfterMs`: how long past its due time a waiting message goes without an attempt before it reads `stuck`.
   * `retentionOf`: how long each organisation keeps its messages and events (its own setting, within the installation's
   * 30 days); every key is written with the expiry it gives, so Redis itself drops the data (docs/privacy.md#retention).
   */
  constructor (
    readonly redis: Redis, private readonly stuckAfterMs = DEFAULT_STUCK_AFTER_MS,
    private readonly retentionOf: RetentionOf = installationRetention
  ) {
    const r = redis as StoreRedis
    this.queued = new ScriptBatch(redis, 'ob_record_queued_batch', RECORD_LUA, { finish: RECORD_QUEUED_FINISH_LUA })
    this.applied = new ScriptBatch(redis, 'ob_apply_event_batch', APPLY_LUA, { isolate: true })
    if (typeof (r as Partial<StoreRedis>).ob_schedule_change !== 'function') {
      redis.defineCommand('ob_schedule_change', { lua: SCHEDULE_CHANGE_LUA })
    }
    if (typeof (r as Partial<StoreRedis>).ob_record_sent !== 'function') redis.defineCommand('ob_record_sent', { lua: RECORD_SENT_LUA })
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
    const suppressed = suppressedRecipients(msg)
    const summary = JSON.stringify({
      id: msg.id,
      org_id: msg.org_id,
      from: msg.from,
      to: msg.to,
      cc: msg.cc,
      bcc: msg.bcc,
      subject: renderedSubject(msg),
      environment: msg.environment,
      created_at: msg.created_at,
      ...(msg.scheduled_at !== undefined ? { scheduled_at: msg.scheduled_at } : {}),
      metadata: msg.metadata,
      tags: msg.tags ?? [],
      stream: streamOf(msg),
      // read back by getMessage only; list rows leave it out (parseSummary)
      ...(suppressed.length > 0 ? { suppressed } : {})
    })
    const org = msg.org_id
    const env: Environment = msg.environment === 'test' ? 'test' : 'live'
    const hour = hourBucket(createdMs)
    const tagged = messageTagKeys(org, env, msg.tags, hour, streamOf(msg))
    const keys = [K.message(org, msg.id), K.messageOwner(msg.id), K.messages(org, env), K.stats(org, env, hour),
      K.messagesByAddress(org, env), K.messagesDue(org, env), ...tagged.indexes, ...tagged.stats]
    const recipients = [...recipientAddresses(msg), ...suppressed.map((s) => s.address)]
    const now = Date.now()
    const scheduled = msg.scheduled_at === undefined ? NaN : Date.parse(msg.scheduled_at)
    const ttl = this.retentionOf(org).messagesMs
    await this.queued.call(keys, [summary, status, STATUS_RANK[status], createdMs, ttl,
      now - ttl, K.messagesByStatusPrefix(org, env), STATS_RETENTION_MS, msg.id, org, env, recipients.length,
      Number.isFinite(scheduled) ? scheduled : createdMs, suppressed.length, msg.scheduled_at === undefined ? '1' : '0',
      ...recipients.map((a) => addressIndexMember(a, createdMs, msg.id))])
  }

  /**
   * Engine, when it takes a scheduled message up to send it: counts it in `sent` for the hour `atMs` (a message
   * sent at once was counted when it was recorded). Counts each message once, whatever the redeliveries.
   */
  async recordSent (msg: QueuedMessage, atMs: number): Promise<boolean> {
    const env: Environment = msg.environment === 'test' ? 'test' : 'live'
    const hour = hourBucket(atMs)
    const tagged = messageTagKeys(msg.org_id, env, msg.tags, hour, streamOf(msg))
    const keys = [K.message(msg.org_id, msg.id), K.stats(msg.org_id, env, hour), ...tagged.stats]
    return await this.r.ob_record_sent(keys.length, ...keys, STATS_RETENTION_MS, hour) === 1
  }

  /**
   * Applies one event: stores it, indexes it per organisation, per type and per message, moves the message's
   * status by precedence and counts it. Atomic and idempotent by event id: a replay returns false and
   * changes nothing. The events applied in one turn of the event loop go to Redis as one batched script, each
   * still on its own: an event Redis refuses fails alone, with Redis's error.
   */
  async applyEvent (e: EventRecord): Promise<boolean> {
    const retention = this.retentionOf(e.org_id)
    // older than the organisation keeps events (a replay of the stream, which keeps them 30 days): not brought back
    const at = Date.parse(e.timestamp)
    if (Number.isFinite(at) && at < Date.now() - retention.eventsMs) return false
    const { keys, args } = applyCall(e, retention)
    return await this.applied.call(keys, args) === 1
  }

  /** A cancelled scheduled message shows `canceled` (only while nothing else happened to it: queued or scheduled). */
  async markCanceled (orgId: string, id: string): Promise<void> {
    await this.r.ob_schedule_change(1, K.message(orgId, id), 'cancel', K.messagesByStatusPrefix(orgId, 'live'), id, STATUS_RANK.canceled,
      READ_MODEL_RETENTION_MS, K.messagesByStatusPrefix(orgId, 'test'), K.messagesDue(orgId, 'live'), K.messagesDue(orgId, 'test'), '')
  }

  /** A rescheduled message shows its new `scheduled_at` (ISO 8601). */
  async markRescheduled (orgId: string, id: string, scheduledAt: string): Promise<void> {
    await this.r.ob_schedule_change(1, K.message(orgId, id), 'reschedule', K.messagesByStatusPrefix(orgId, 'live'), id, scheduledAt,
      READ_MODEL_RETENTION_MS, K.messagesByStatusPrefix(orgId, 'test'), K.messagesDue(orgId, 'live'), K.messagesDue(orgId, 'test'),
      Date.parse(scheduledAt))
  }

  /** 404 `not_found` when no organisation has the id, 403 `forbidden` when another one does. */
  async getMessage (orgId: string, id: string): Promise<MessageDetail> {
    const [fields, eventIds] = await Promise.all([
      this.redis.hmget(K.message(orgId, id), ...ROW_FIELDS),
      this.redis.zrange(K.messageEvents(orgId, id), String(-MESSAGE_EVENTS_INLINE), '-1')
    ])
    if (fields[0] === null || fields[0] === undefined) {
      await this.assertOwner(orgId, id)
      throw new ApiError('not_found', `No message with id ${id}.`)
    }
    const summary = parseSummary(fields, Date.now(), this.stuckAfterMs)
    const [recipients, events] = await Promise.all([
      recipientStates(this.redis, K.message(orgId, id), summary,
        (JSON.parse(fields[0]) as { suppressed?: SuppressedRecipient[] }).suppressed),
      this.loadEvents(orgId, eventIds)
    ])
    return { ...summary, recipients, events: events.filter((e) => e !== undefined) }
  }

  /** Resolves when the organisation has the message; else 404 `not_found`, or 403 `forbidden` when another one has it. */
  async requireMessage (orgId: string, id: string): Promise<void> {
    if (await this.redis.exists(K.message(orgId, id)) === 1) return
    await this.assertOwner(orgId, id)
    throw new ApiError('not_found', `No message with id ${id}.`)
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
    const s = JSON.parse(summary) as Pick<MessageSummary, 'to' | 'cc' | 'bcc' | 'environment' | 'from'> &
      { tags?: string[], stream?: string }
    return {
      stream: streamOf(s),
      orgId,
      environment: s.environment,
      recipients: [...s.to, ...s.cc, ...s.bcc].map(bareAddress),
      tags: s.tags ?? [],
      domain: addressDomain(s.from)
    }
  }

  /**
   * The tags, sending domain and stream of the organisation's message, for events made without the message at hand
   * (tracking links): no tags, no domain and no stream when it is not (or no longer) in the read model.
   */
  async messageTags (orgId: string, id: string): Promise<{ tags: string[], domain?: string, stream?: string }> {
    const summary = await this.redis.hget(K.message(orgId, id), 'summary')
    if (summary === null) return { tags: [] }
    const s = JSON.parse(summary) as { tags?: string[], from?: string, stream?: string }
    return { tags: s.tags ?? [], ...(typeof s.from === 'string' ? { domain: addressDomain(s.from) } : {}), stream: streamOf(s) }
  }

  /**
   * The environment and sending domain of each message (undefined where it is no longer kept), read in one round
   * trip: what a stored event envelope does not say, for replaying and recovering it to webhooks. An empty id
   * (an event of no message) is not looked up.
   */
  async messageRouting (
    orgId: string, ids: readonly string[]
  ): Promise<Array<{ environment: 'live' | 'test', domain?: string } | undefined>> {
    const asked = ids.filter((id) => id !== '')
    if (asked.length === 0) return ids.map(() => undefined)
    const p = this.redis.pipeline()
    for (const id of asked) p.hmget(K.message(orgId, id), 'env', 'summary')
    const rows = await p.exec() ?? []
    let next = 0
    return ids.map((id) => {
      if (id === '') return undefined
      const [err, v] = rows[next++]!
      if (err !== null) throw err
      const [env, summary] = v as [string | null, string | null]
      if (env === null && summary === null) return undefined
      const from = summary === null ? undefined : (JSON.parse(summary) as { from?: string }).from
      return { environment: env === 'test' ? 'test' : 'live', ...(typeof from === 'string' ? { domain: addressDomain(from) } : {}) }
    })
  }

  /**
   * Newest first, of one environment (sandbox traffic is never in the live view). `to` keeps messages with a
   * recipient (to, cc or bcc) whose address starts with it, case-insensitively; those come in address order,
   * newest first per address. `tag` keeps messages sent with that tag. `stuck` keeps stuck messages, read from the
   * due index up to now less the grace, most recently due first.
   */
  async listMessages (orgId: string, q: MessageQuery): Promise<IndexPage<MessageSummary>> {
    const env = q.environment ?? 'live'
    const now = Date.now()
    const page = {
      limit: q.limit, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}), ...(q.maxBytes !== undefined ? { maxBytes: q.maxBytes } : {})
    }
    if (q.to !== undefined) return await this.listMessagesTo(orgId, env, q.to, page, messageFilter(q), now)
    const { key, keep } = messageIndex(orgId, env, q)
    const stuckOnly = q.stuck === true ? { maxScore: now - this.stuckAfterMs } : {}
    return await pageIndex(this.redis, key, { ...page, filtered: keep !== undefined, ...stuckOnly }, async (ids) => {
      const rows = await this.rows(orgId, ids)
      return rows.map((row) => {
        // An index entry can outlive its message by up to one write; skip it.
        if (row[0] === null || row[0] === undefined) return undefined
        const m = parseSummary(row, now, this.stuckAfterMs)
        return keep === undefined || keep(m) ? m : undefined
      })
    })
  }

  private async listMessagesTo (
    orgId: string, env: Environment, to: string, page: { limit: number, cursor?: string, maxBytes?: number },
    keep: Keep<MessageSummary>, now: number
  ): Promise<IndexPage<MessageSummary>> {
    return await pageAddressIndex(this.redis, K.messagesByAddress(orgId, env), to.trim().toLowerCase(), page, async (ids) => {
      const rows = await this.rows(orgId, ids)
      return rows.map((row) => {
        if (row[0] === null || row[0] === undefined) return 'expired'
        const m = parseSummary(row, now, this.stuckAfterMs)
        return keep === undefined || keep(m) ? m : undefined
      })
    })
  }

  private async rows (orgId: string, ids: string[]): Promise<Row[]> {
    return await Promise.all(ids.map((id) => this.redis.hmget(K.message(orgId, id), ...ROW_FIELDS)))
  }

  /** Newest first, as webhook envelopes. A `message_id` of another organisation is 403. */
  async listEvents (orgId: string, q: EventQuery): Promise<IndexPage<EventEnvelope>> {
    if (q.message_id !== undefined) await this.assertOwner(orgId, q.message_id)
    const { key, keep } = eventIndex(orgId, q.environment ?? 'live', q)
    const page = {
      limit: q.limit, ...(q.cursor !== undefined ? { cursor: q.cursor } : {}), ...(q.maxBytes !== undefined ? { maxBytes: q.maxBytes } : {})
    }
    return await pageIndex(this.redis, key, { ...page, filtered: keep !== undefined }, async (ids) => {
      const events = await this.loadEvents(orgId, ids)
      return keep === undefined ? events : events.map((e) => e !== undefined && keep(e) ? e : undefined)
    })
  }

  /**
   * Counts per event type (and `sent`, messages queued) over whole UTC hours overlapping [fromMs, toMs), of one
   * environment; with `tag`, of its messages only; with `stream` (and no tag), of the stream's messages only.
   */
  async stats (
    orgId: string, fromMs: number, toMs: number, interval?: StatsInterval, environment: Environment = 'live', tag?: string,
    stream?: string
  ): Promise<StatsResult> {
    const hashKey = tag !== undefined
      ? (hour: string) => K.statsTagged(orgId, environment, tag, hour)
      : stream !== undefined
        ? (hour: string) => K.statsInStream(orgId, environment, stream, hour)
        : (hour: string) => K.stats(orgId, environment, hour)
    return await statsOver((hour) => this.redis.hgetall(hashKey(hour)), fromMs, toMs, interval)
  }

  /**
   * Whether the read model still holds messages or events of the organisation's message stream, live or sandbox: one
   * EXISTS over the stream's four indexes, which expire with the last message or event in them (the retention).
   */
  async hasStreamHistory (orgId: string, stream: string): Promise<boolean> {
    const keys = (['live', 'test'] as const)
      .flatMap((env) => [K.messagesInStream(orgId, env, stream), K.eventsInStream(orgId, env, stream)])
    return await this.redis.exists(...keys) > 0
  }

  /**
   * Ids and times (ms) of the org's events (live and sandbox) of these types at or after `fromMs`, oldest first, in
   * batches of at most `batch`, read a page at a time (event_pages.ts).
   */
  eventIdsSince (orgId: string, types: readonly string[], fromMs: number, batch: number): AsyncGenerator<EventRef[]> {
    return eventIdBatches(this.redis, orgId, types, fromMs, batch)
  }

  /** Stored events (webhook envelopes as JSON text, the bytes webhooks were sent), undefined where gone. */
  async eventJson (orgId: string, ids: readonly string[]): Promise<Array<string | undefined>> {
    if (ids.length === 0) return []
    return (await this.redis.mget(ids.map((id) => K.event(orgId, id)))).map((v) => v ?? undefined)
  }

  /**
   * The organisation that owns an event id, undefined when none does (never stored, or older than the retention):
   * one read, whatever the number of organisations.
   */
  async eventOwner (id: string): Promise<string | undefined> {
    return await this.redis.get(K.eventOwner(id)) ?? undefined
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
