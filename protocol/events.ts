import { createHash } from 'node:crypto'
import type { HealthChangedData } from './domain_health.ts'
import type { PauseReason, ReputationCounts, ReputationRates } from './reputation.ts'

/**
 * The closed set of event types. Every one of them is published to `ob.evt.<org_id>.<type>` as an
 * EventRecord; webhooks, the read model and the live stream all read that one stream.
 */
export const EVENT_TYPES = [
  'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound.received', 'failed',
  'domain.health_changed', 'stream.paused', 'stream.resumed'
] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** Types a webhook may subscribe to (`inbound` is an alias of `inbound.received`); `failed` is internal. */
export const SUBSCRIBABLE_EVENT_TYPES = [
  'delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound', 'inbound.received',
  'domain.health_changed', 'stream.paused', 'stream.resumed'
] as const

/** Message status as the read API shows it. */
export const MESSAGE_STATUSES = [
  'queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'complained', 'failed', 'canceled'
] as const
export type MessageStatus = (typeof MESSAGE_STATUSES)[number]

/**
 * How a bounce reads, from the reply's codes and text; only `mailbox` and `domain` suppress the address. `operator`:
 * no reply at all, an operator bounced the waiting mail (protocol/queues.ts).
 */
export type BounceCategory = 'mailbox' | 'domain' | 'policy' | 'content' | 'size' | 'mailbox_full' | 'other' | 'operator'
/**
 * Why a message was never sent to a recipient (`failed`): it could not be built (a bad address, a deleted template
 * for a message queued without its copy, a queued message that breaks its schema), its sending domain was deleted,
 * or its stored content was lost.
 */
export type FailureCategory = 'unbuildable' | 'domain_removed' | 'content_unavailable'
export type AuthResult = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'temperror' | 'permerror'

/**
 * Every event about one recipient of a sent message names the message and the recipient. Events the engine makes
 * while delivering (and the sandbox's simulated ones) also carry the message's sender, rendered subject and
 * metadata; events from tracking links and from reports received later do not.
 */
export type RecipientEventBase = {
  message_id: string
  to: string
  from?: string
  subject?: string
  metadata?: Readonly<Record<string, string>>
  /** The message's tags; events from tracking links and reports carry them too (looked up by message id). */
  tags?: readonly string[]
  /**
   * The message stream the message was sent on (`transactional` or a broadcast stream's id); events from tracking
   * links and reports carry it too, looked up by message id (absent when the message is no longer kept).
   */
  stream?: string
}

export type FailedData = { failed_at: string, failure_category: FailureCategory, reason: string }

/** The fields each type adds to RecipientEventBase (docs/webhooks.md lists them for users). */
export type RecipientEventFields = {
  delivered: { delivered_at: string, smtp_response: string }
  bounced: {
    bounce_type: 'hard' | 'soft', bounce_code: string, bounce_message: string, bounce_category: BounceCategory, bounced_at: string
  }
  deferred: { deferred_at: string, smtp_response: string, attempt: number, next_attempt_at: string }
  failed: FailedData
  complained: { complained_at: string, feedback_type: string }
  opened: { opened_at: string, user_agent: string, ip_address: string }
  clicked: { clicked_at: string, url: string, user_agent: string, ip_address: string }
  unsubscribed: { unsubscribed_at: string, method: 'link' | 'one-click' | 'mailto' }
}
export type RecipientEventType = keyof RecipientEventFields

/** `inbound.received`: a received message for one route (cut to a bounded size, see `truncated` and `raw`). */
export type InboundReceivedData = {
  message_id: string
  route_id: string
  from: string
  to: string[]
  subject: string
  text: string
  html: string
  headers: Readonly<Record<string, string>>
  authentication?: { spf: AuthResult, dkim: AuthResult, dmarc: AuthResult }
  spam_score?: number
  /** `skipped` when the HTML went past a parsing limit. */
  content_analysis?: 'complete' | 'skipped'
  attachments: Array<{ filename: string, content_type: string, size: number, content?: string, content_omitted?: true }>
  received_at: string
  /** Something was cut to keep the event within its size (OB_INBOUND_EVENT_MAX_BYTES). */
  truncated?: true
  /** Set when anything was left out: where the organisation reads the whole message, and its size in bytes. */
  raw?: { url: string, size: number }
  /** Set when the message could not be processed in 10 attempts: the event carries the envelope and `raw` only. */
  processing_error?: string
}

/** `stream.paused`: the reputation guard paused sending on a stream (protocol/reputation.ts, docs/reputation.md). */
export type StreamPausedData = {
  stream: string
  reason: PauseReason
  paused_at: string
  counts: ReputationCounts
  rates: ReputationRates
}
/** `stream.resumed`: an admin or the operator resumed a paused stream; its window starts again from zero. */
export type StreamResumedData = { stream: string, resumed_at: string, resumed_by: 'admin' | 'operator', paused_at: string }

/**
 * The `data` of each event type. `domain.health_changed` is about a sending domain, `stream.paused` and
 * `stream.resumed` about a stream of the organisation, not a message.
 */
export type EventDataOf = { [T in RecipientEventType]: RecipientEventBase & RecipientEventFields[T] } &
  { 'inbound.received': InboundReceivedData, 'domain.health_changed': HealthChangedData } &
  { 'stream.paused': StreamPausedData, 'stream.resumed': StreamResumedData }

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
  /**
   * `test` on the events of a sandbox (`ob_test_` key) message, absent on live ones, so the live stream can keep
   * the two apart without a lookup. Not part of the envelope.
   */
  environment?: 'test'
  /**
   * The sending domain (lower case) of the message the event is about, and the domain of a `domain.health_changed`
   * event, so webhooks can filter by it without a lookup. Absent on events of no sending domain (inbound.received)
   * and on those stored before it was added. Not part of the envelope.
   */
  domain?: string
}

/**
 * The envelope of an event as the event reads (`GET /v1/events`) and the live stream show it and the read model stores
 * it, in the order users see it. Webhooks receive `webhookEnvelopeOf`, which adds `environment`.
 */
export function envelopeOf (e: EventRecord): { id: string, type: string, timestamp: string, data: Record<string, unknown> } {
  return { id: e.id, type: e.type, timestamp: e.timestamp, data: e.data }
}

/** What a webhook receives: the envelope with `environment` after `timestamp` (every event says which it is). */
export interface WebhookEventEnvelope {
  id: string
  type: string
  timestamp: string
  environment: 'live' | 'test'
  data: Record<string, unknown>
}

/** The webhook body of a stored envelope (read model, replay, recover) whose environment is known from elsewhere. */
export function withEnvironment (
  e: { id: string, type: string, timestamp: string, data: Record<string, unknown> }, environment: 'live' | 'test'
): WebhookEventEnvelope {
  return { id: e.id, type: e.type, timestamp: e.timestamp, environment, data: e.data }
}

/** The webhook body of an event record: `test` for a sandbox message's events, `live` for every other. */
export function webhookEnvelopeOf (e: EventRecord): WebhookEventEnvelope {
  return withEnvironment(e, e.environment === 'test' ? 'test' : 'live')
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
 * defaults to now. `environment`: the message's (a live event's record stays as it was before sandbox events were
 * marked). `domain`: the sending domain, for webhook filters (see EventRecord).
 */
export function eventRecord<T extends EventType> (
  id: string, type: T, orgId: string, data: EventDataOf[T], messageId?: string, timestamp = new Date().toISOString(),
  environment: 'live' | 'test' = 'live', domain?: string
): EventRecord {
  return {
    id,
    type,
    timestamp,
    org_id: orgId,
    ...(messageId !== undefined ? { message_id: messageId } : {}),
    data,
    ...(environment === 'test' ? { environment } : {}),
    ...(domain !== undefined && domain !== '' ? { domain: domain.toLowerCase() } : {})
  }
}

/**
 * `{tags}` for the data of an event about a message with tags, `{}` for one without: an untagged message's events
 * stay byte for byte what they were before tags existed (event ids and stored bytes are what receivers compare).
 */
export function tagsField (tags: readonly string[] | undefined): { tags?: readonly string[] } {
  return tags === undefined || tags.length === 0 ? {} : { tags }
}

/** The `stream` of an event's data: the message's stream when known, nothing when not. */
export function streamField (stream: string | undefined): { stream?: string } {
  return stream === undefined ? {} : { stream }
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
