import type { MessageStatus } from '../../protocol/mod.ts'
import { READ_MODEL_KEYS as K, type Environment } from './message_store_keys.ts'
import { hasTag } from './tag_index.ts'

/** A check of each item read for a filter the chosen index does not cover; undefined when there is none. */
export type Keep<T> = ((item: T) => boolean) | undefined

/** What the filters read of a listed message and of a listed event. */
interface ListedMessage { status: MessageStatus, tags: string[], stuck: boolean, stream: string }
interface ListedEvent { type: string, data: Record<string, unknown> }

/** `maxBytes`: the most the page's JSON body may take (OB_API_LIST_MAX_BYTES). */
export interface MessageQuery {
  limit: number
  cursor?: string
  maxBytes?: number
  status?: MessageStatus
  to?: string
  tag?: string
  stuck?: boolean
  /** A message stream's id. */
  stream?: string
  environment?: Environment
}
export interface EventQuery {
  limit: number
  cursor?: string
  maxBytes?: number
  message_id?: string
  type?: string
  tag?: string
  stream?: string
  environment?: Environment
}

/** Both filters, or whichever is given. */
function both<T> (a: Keep<T>, b: Keep<T>): Keep<T> {
  if (a === undefined) return b
  if (b === undefined) return a
  return (item) => a(item) && b(item)
}

type MessageFilters = { status?: MessageStatus, tag?: string, stuck?: boolean, stream?: string }

/** Status, tag, stream and stuck checked on each message: what a `to` listing (read from the recipient index) keeps. */
export function messageFilter (q: MessageFilters): Keep<ListedMessage> {
  const { status, tag, stream } = q
  const byStatus: Keep<ListedMessage> = status === undefined ? undefined : (m) => m.status === status
  const byTag: Keep<ListedMessage> = tag === undefined ? undefined : (m) => hasTag(m.tags, tag)
  const byStuck: Keep<ListedMessage> = q.stuck === true ? (m) => m.stuck : undefined
  const byStream: Keep<ListedMessage> = stream === undefined ? undefined : (m) => m.stream === stream
  return both(both(both(byStatus, byTag), byStuck), byStream)
}

/**
 * The index a message listing without `to` reads in one environment (the due index for stuck messages, else tag,
 * else status, else all) and the filter it leaves to checking each item, which costs a scan bounded by pageIndex's
 * budget. Stuck messages are read from the due index up to now less the grace (the caller bounds the range); each is
 * checked again, since an entry may lag its message by one write.
 */
export function messageIndex (
  orgId: string, env: Environment, q: MessageFilters
): { key: string, keep: Keep<ListedMessage> } {
  const { status, tag, stream } = q
  if (q.stuck === true) return { key: K.messagesDue(orgId, env), keep: messageFilter(q) }
  if (tag !== undefined) return { key: K.messagesTagged(orgId, env, tag), keep: messageFilter({ status, stream }) }
  if (stream !== undefined) return { key: K.messagesInStream(orgId, env, stream), keep: messageFilter({ status }) }
  if (status !== undefined) return { key: K.messagesByStatus(orgId, env, status), keep: undefined }
  return { key: K.messages(orgId, env), keep: undefined }
}

/**
 * The same for events: message (whatever its environment), else tag, else stream, else type, else all of one
 * environment.
 */
export function eventIndex (
  orgId: string, env: Environment, q: { message_id?: string, type?: string, tag?: string, stream?: string }
): { key: string, keep: Keep<ListedEvent> } {
  const { type, tag, stream } = q
  const byType: Keep<ListedEvent> = type === undefined ? undefined : (e) => e.type === type
  const byTag: Keep<ListedEvent> = tag === undefined ? undefined : (e) => hasTag(e.data.tags, tag)
  const byStream: Keep<ListedEvent> = stream === undefined ? undefined : (e) => e.data.stream === stream
  if (q.message_id !== undefined) return { key: K.messageEvents(orgId, q.message_id), keep: both(both(byType, byTag), byStream) }
  if (tag !== undefined) return { key: K.eventsTagged(orgId, env, tag), keep: both(byType, byStream) }
  if (stream !== undefined) return { key: K.eventsInStream(orgId, env, stream), keep: byType }
  if (type !== undefined) return { key: K.eventsByType(orgId, env, type), keep: undefined }
  return { key: K.events(orgId, env), keep: undefined }
}
