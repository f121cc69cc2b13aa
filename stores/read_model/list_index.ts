import type { MessageStatus } from '../../protocol/mod.ts'
import { READ_MODEL_KEYS as K, type Environment } from './message_store_keys.ts'
import { hasTag } from './tag_index.ts'

/** A check of each item read for a filter the chosen index does not cover; undefined when there is none. */
export type Keep<T> = ((item: T) => boolean) | undefined

/** What the filters read of a listed message and of a listed event. */
interface ListedMessage { status: MessageStatus, tags: string[], stuck: boolean }
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
  environment?: Environment
}
export interface EventQuery {
  limit: number
  cursor?: string
  maxBytes?: number
  message_id?: string
  type?: string
  tag?: string
  environment?: Environment
}

/** Both filters, or whichever is given. */
function both<T> (a: Keep<T>, b: Keep<T>): Keep<T> {
  if (a === undefined) return b
  if (b === undefined) return a
  return (item) => a(item) && b(item)
}

/** Status, tag and stuck checked on each message: what a `to` listing (read from the recipient index) keeps. */
export function messageFilter (q: { status?: MessageStatus, tag?: string, stuck?: boolean }): Keep<ListedMessage> {
  const { status, tag } = q
  const byStatus: Keep<ListedMessage> = status === undefined ? undefined : (m) => m.status === status
  const byTag: Keep<ListedMessage> = tag === undefined ? undefined : (m) => hasTag(m.tags, tag)
  const byStuck: Keep<ListedMessage> = q.stuck === true ? (m) => m.stuck : undefined
  return both(both(byStatus, byTag), byStuck)
}

/**
 * The index a message listing without `to` reads in one environment (the due index for stuck messages, else tag,
 * else status, else all) and the filter it leaves to checking each item, which costs a scan bounded by pageIndex's
 * budget. Stuck messages are read from the due index up to now less the grace (the caller bounds the range); each is
 * checked again, since an entry may lag its message by one write.
 */
export function messageIndex (
  orgId: string, env: Environment, q: { status?: MessageStatus, tag?: string, stuck?: boolean }
): { key: string, keep: Keep<ListedMessage> } {
  const { status, tag } = q
  if (q.stuck === true) return { key: K.messagesDue(orgId, env), keep: messageFilter(q) }
  if (tag !== undefined) {
    return { key: K.messagesTagged(orgId, env, tag), keep: status === undefined ? undefined : (m) => m.status === status }
  }
  if (status !== undefined) return { key: K.messagesByStatus(orgId, env, status), keep: undefined }
  return { key: K.messages(orgId, env), keep: undefined }
}

/**
 * The same for events: message (whatever its environment), else tag, else type, else all of one environment.
 */
export function eventIndex (
  orgId: string, env: Environment, q: { message_id?: string, type?: string, tag?: string }
): { key: string, keep: Keep<ListedEvent> } {
  const { type, tag } = q
  const byType: Keep<ListedEvent> = type === undefined ? undefined : (e) => e.type === type
  const byTag: Keep<ListedEvent> = tag === undefined ? undefined : (e) => hasTag(e.data.tags, tag)
  if (q.message_id !== undefined) return { key: K.messageEvents(orgId, q.message_id), keep: both(byType, byTag) }
  if (tag !== undefined) return { key: K.eventsTagged(orgId, env, tag), keep: byType }
  if (type !== undefined) return { key: K.eventsByType(orgId, env, type), keep: undefined }
  return { key: K.events(orgId, env), keep: undefined }
}
