import { createHash } from 'node:crypto'

/**
 * The closed set of event types. Every one of them is published to `ob.evt.<org_id>.<type>` as an
 * EventRecord; webhooks, the read model and the live stream all read that one stream.
 */
export const EVENT_TYPES = ['delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound.received', 'failed'] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** Types a webhook may subscribe to (`inbound` is an alias of `inbound.received`); `failed` is internal. */
export const SUBSCRIBABLE_EVENT_TYPES = ['delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound', 'inbound.received'] as const

/** Message status as the read API shows it. */
export const MESSAGE_STATUSES = ['queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'complained', 'failed'] as const
export type MessageStatus = (typeof MESSAGE_STATUSES)[number]

/**
 * What is stored on the event stream. A webhook receives `{id, type, timestamp, data}` of it; `org_id`
 * and `message_id` are for routing and indexing and are not sent.
 */
export interface EventRecord {
  id: string
  type: EventType
  timestamp: string
  org_id: string
  message_id?: string
  data: Record<string, unknown>
}

/** The webhook envelope of an event, in the order users see it. */
export function envelopeOf (e: EventRecord): { id: string, type: string, timestamp: string, data: Record<string, unknown> } {
  return { id: e.id, type: e.type, timestamp: e.timestamp, data: e.data }
}

/**
 * Deterministic event ids: the same outcome of the same attempt always gets the same id, so a redelivered
 * message that emits its events again is deduplicated by JetStream (Nats-Msg-Id) and by receivers.
 */
export function eventId (...parts: Array<string | number>): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest()
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz'
  let out = 'evt_'
  for (let i = 0; i < 26; i++) out += alphabet[h[i]! & 31]
  return out
}

/**
 * The one way an event record is made, so every publisher stores the same shape (key order included: the
 * stored JSON is what webhooks sign and receivers compare). `timestamp` is when the event happened; it
 * defaults to now.
 */
export function eventRecord (id: string, type: EventType, orgId: string, data: Record<string, unknown>, messageId?: string, timestamp = new Date().toISOString()): EventRecord {
  return { id, type, timestamp, org_id: orgId, ...(messageId !== undefined ? { message_id: messageId } : {}), data }
}

/** The status a message takes when an event of this type happens to it (undefined: no change). */
export function statusAfter (type: EventType): MessageStatus | undefined {
  switch (type) {
    case 'delivered': return 'delivered'
    case 'bounced': return 'bounced'
    case 'deferred': return 'deferred'
    case 'complained': return 'complained'
    case 'failed': return 'failed'
    default: return undefined
  }
}
