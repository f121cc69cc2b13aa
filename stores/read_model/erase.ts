import type { Redis } from 'ioredis'
import { STATUS_RANK, type MessageStatus } from '../../protocol/mod.ts'
import { READ_MODEL_KEYS as K, type Environment } from './message_store_keys.ts'
import { addressIndexMember } from './address_index.ts'
import { recipientAddresses, type SuppressedRecipient } from './recipient_states.ts'
import { eventStream, eventTags, messageTagKeys } from './tag_index.ts'

/**
 * Erasing an address from the read model (POST /v1/privacy/erase): the organisation's messages to it, with every index
 * entry and event of theirs, and any other events naming it. Messages are erased whole, other recipients included:
 * their summary and content name every recipient. Hourly counters are left as they are: they hold counts, no address.
 * This module knows the key layout of message_store_keys.ts and is the only writer besides the scripts.
 */

const SEP = '\u0000'
const ENVS: readonly Environment[] = ['live', 'test']
const STATUSES = Object.keys(STATUS_RANK) as MessageStatus[]

/** An event to erase as the event stream holds it: its id, type and the tags it carries. */
export interface EventToErase { id: string, type: string, data: Record<string, unknown> }

/** What the read model held and no longer holds. */
export interface ReadModelErased { messages: number, recipient_entries: number, events: number }

/** Ids of the organisation's messages (both environments) with the address (bare, lower-cased) among their recipients. */
export async function messagesToAddress (redis: Redis, orgId: string, address: string): Promise<string[]> {
  const lower = Buffer.from(`[${address}${SEP}`)
  const upper = Buffer.concat([Buffer.from(`[${address}${SEP}`), Buffer.from([0xff])])
  const ids = new Set<string>()
  for (const env of ENVS) {
    const members = await redis.zrangebylex(K.messagesByAddress(orgId, env), lower, upper)
    for (const m of members) ids.add(m.slice(m.lastIndexOf(SEP) + 1))
  }
  return [...ids]
}

/** Statuses of a message whose delivery has not ended: an erase waits for them (its delivery state is still in use). */
const IN_DELIVERY: ReadonlySet<string> = new Set<MessageStatus>(['queued', 'scheduled', 'sending', 'deferred'])

/** Of these messages, the ones whose delivery has not ended (queued, scheduled, sending or deferred). */
export async function messagesInDelivery (redis: Redis, orgId: string, messageIds: readonly string[]): Promise<string[]> {
  if (messageIds.length === 0) return []
  const p = redis.pipeline()
  for (const id of messageIds) p.hget(K.message(orgId, id), 'status')
  const results = (await p.exec()) ?? []
  return messageIds.filter((_id, i) => {
    const [err, status] = results[i] ?? [new Error('no reply'), null]
    if (err !== null) throw err
    return typeof status === 'string' && IN_DELIVERY.has(status)
  })
}

interface HeldMessage {
  id: string
  summary?: { to: string[], cc: string[], bcc: string[], tags?: string[], stream?: string, suppressed?: SuppressedRecipient[] }
  created?: number
}

/** Deletes the messages (record, recipient entries, event list, index entries) and the events, with all their index entries. */
export async function eraseFromReadModel (
  redis: Redis, orgId: string, messageIds: readonly string[], streamEvents: readonly EventToErase[]
): Promise<ReadModelErased> {
  const events = new Map<string, EventToErase>(streamEvents.map((e) => [e.id, e]))
  const held: HeldMessage[] = []
  for (const id of messageIds) {
    const [fields, eventIds] = await Promise.all([
      redis.hmget(K.message(orgId, id), 'summary', 'created'),
      redis.zrange(K.messageEvents(orgId, id), '0', '-1')
    ])
    const summary = fields[0] === null || fields[0] === undefined ? undefined : JSON.parse(fields[0]) as HeldMessage['summary']
    held.push({ id, ...(summary !== undefined ? { summary } : {}), ...(fields[1] != null ? { created: Number(fields[1]) } : {}) })
    // the message's own events, as the read model holds them (the stream may have dropped some already)
    const missing = eventIds.filter((e) => !events.has(e))
    if (missing.length === 0) continue
    const json = await redis.mget(missing.map((e) => K.event(orgId, e)))
    missing.forEach((e, i) => {
      const parsed = json[i] == null ? undefined : JSON.parse(json[i]!) as { type?: string, data?: Record<string, unknown> }
      events.set(e, { id: e, type: parsed?.type ?? '', data: parsed?.data ?? {} })
    })
  }
  // the records and event JSON first, each DEL counting what was held; then the index entries pointing at them
  const messages = held.length === 0 ? 0 : await redis.del(...held.map((m) => K.message(orgId, m.id)))
  const eventList = [...events.values()]
  const erasedEvents = eventList.length === 0 ? 0 : await redis.del(...eventList.map((e) => K.event(orgId, e.id)))
  let recipientEntries = 0
  for (const m of held) {
    if (m.summary === undefined || m.created === undefined) continue
    // recipients skipped as suppressed are in the index too (the record lists them)
    const addresses = [...recipientAddresses(m.summary), ...(m.summary.suppressed ?? []).map((s) => s.address)]
    const members = addresses.map((a) => addressIndexMember(a, m.created!, m.id))
    for (const env of ENVS) if (members.length > 0) recipientEntries += await redis.zrem(K.messagesByAddress(orgId, env), ...members)
  }
  const p = redis.pipeline()
  for (const m of held) {
    p.del(K.messageEvents(orgId, m.id), K.messageOwner(m.id))
    for (const env of ENVS) {
      p.zrem(K.messages(orgId, env), m.id).zrem(K.messagesDue(orgId, env), m.id)
      for (const st of STATUSES) p.zrem(K.messagesByStatus(orgId, env, st), m.id)
      // its tags' and its stream's indexes, as recording it wrote them (no stats hour: counts are not erased)
      for (const key of messageTagKeys(orgId, env, m.summary?.tags, '', m.summary?.stream).indexes) p.zrem(key, m.id)
    }
  }
  for (const e of eventList) {
    p.del(K.eventOwner(e.id))
    for (const env of ENVS) {
      p.zrem(K.events(orgId, env), e.id)
      if (e.type !== '') p.zrem(K.eventsByType(orgId, env, e.type), e.id)
      for (const t of eventTags(e.data)) p.zrem(K.eventsTagged(orgId, env, t), e.id)
      const stream = eventStream(e.data)
      if (stream !== undefined) p.zrem(K.eventsInStream(orgId, env, stream), e.id)
    }
  }
  const results = await p.exec() ?? []
  const failed = results.find(([err]) => err !== null)
  // eslint-disable-next-line no-throw-literal -- rethrows the Redis client's own error
  if (failed !== undefined) throw failed[0] as Error
  return { messages, recipient_entries: recipientEntries, events: erasedEvents }
}
