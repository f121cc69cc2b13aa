import { deliveredCount, streamOf, type MessageStatus } from '../../protocol/mod.ts'
import { recipientAddresses, type RecipientState, type SuppressedRecipient } from './recipient_states.ts'
import { attemptTiming } from './due.ts'

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
  /**
   * Distinct recipients of the request (to, cc and bcc, those skipped as suppressed included) and how many of them were
   * delivered (complained ones included: a complaint is about a message received).
   */
  recipient_count: number
  delivered_count: number
  /** The tags given at send (empty when none). */
  tags: string[]
  /** The message stream it was sent on (`transactional` for messages recorded before streams). */
  stream: string
  /** When the next delivery attempt is due (queued, scheduled or deferred messages). */
  next_attempt_at?: string
  /** That attempt is overdue by more than the store's grace (worked out when read). */
  stuck: boolean
  /** Open and click events of the message so far (every recipient's, each event once). */
  opened_count: number
  clicked_count: number
  /** The latest bounce's SMTP code and reply, when a recipient bounced. */
  bounce_reason?: string
}

export interface MessageDetail extends MessageSummary { recipients: RecipientState[], events: EventEnvelope[] }

export interface MessageRecipients {
  orgId: string
  environment: 'live' | 'test'
  recipients: string[]
  tags: string[]
  /** The sending domain (the from address's), lower case: events the message leads to carry it for webhook filters. */
  domain: string
  /** The message stream it was sent on. */
  stream: string
}

/**
 * Fields of a message hash a list row needs: summary, status, recipient count, delivered recipients, new time,
 * the next attempt of its latest deferral, deferred recipients, complained recipients, opens, clicks, the latest
 * bounce's reason.
 */
export const ROW_FIELDS = [
  'summary', 'status', 'rn', 'c:delivered', 'scheduled_at', 'next', 'c:deferred', 'c:complained', 'n:opened', 'n:clicked', 'bounce'
] as const
export type Row = Array<string | null>

/**
 * `scheduled_at`: the hash's own field, set when the message was rescheduled (the summary keeps the queued time).
 * `stuck` compares the due time with `now`.
 */
export function parseSummary (row: Row, now: number, graceMs: number): MessageSummary {
  const [json, status, rn, delivered, scheduledAt, next, deferred, complained, opened, clicked, bounce] = row
  const s = JSON.parse(json!) as Omit<MessageSummary, 'status' | 'recipient_count' | 'delivered_count' | 'stuck' | 'opened_count' |
    'clicked_count'> & { org_id?: string, suppressed?: SuppressedRecipient[] }
  const { org_id: _org, suppressed, ...rest } = s
  if (typeof scheduledAt === 'string') rest.scheduled_at = scheduledAt
  const recipientCount = rn !== null && rn !== undefined ? Number(rn) : recipientAddresses(s).length + (suppressed?.length ?? 0)
  const m = { ...rest, status: (status ?? 'queued') as MessageStatus }
  const timing = attemptTiming(m, Number(deferred ?? 0), typeof next === 'string' ? Number(next) : undefined, now, graceMs)
  // Messages recorded before tags existed have none.
  const deliveredN = deliveredCount({ delivered: Number(delivered ?? 0), complained: Number(complained ?? 0) })
  return {
    ...m,
    tags: rest.tags ?? [],
    stream: streamOf(rest),
    recipient_count: recipientCount,
    delivered_count: deliveredN,
    ...timing,
    opened_count: Number(opened ?? 0),
    clicked_count: Number(clicked ?? 0),
    ...(typeof bounce === 'string' && bounce !== '' ? { bounce_reason: bounce } : {})
  }
}
