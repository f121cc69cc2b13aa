import type { MessageStatus } from '../../protocol/mod.ts'
import { recipientAddresses, type RecipientState } from './recipient_states.ts'
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
  /** Distinct recipients (to, cc and bcc) and how many of them were delivered. */
  recipient_count: number
  delivered_count: number
  /** The tags given at send (empty when none). */
  tags: string[]
  /** When the next delivery attempt is due (queued, scheduled or deferred messages). */
  next_attempt_at?: string
  /** That attempt is overdue by more than the store's grace (worked out when read). */
  stuck: boolean
}

export interface MessageDetail extends MessageSummary { recipients: RecipientState[], events: EventEnvelope[] }

export interface MessageRecipients { orgId: string, environment: 'live' | 'test', recipients: string[], tags: string[] }

/**
 * Fields of a message hash a list row needs: summary, status, recipient count, delivered recipients, new time,
 * the next attempt of its latest deferral.
 */
export const ROW_FIELDS = ['summary', 'status', 'rn', 'c:delivered', 'scheduled_at', 'next', 'c:deferred'] as const
export type Row = Array<string | null>

/**
 * `scheduled_at`: the hash's own field, set when the message was rescheduled (the summary keeps the queued time).
 * `stuck` compares the due time with `now`.
 */
export function parseSummary (row: Row, now: number, graceMs: number): MessageSummary {
  const [json, status, rn, delivered, scheduledAt, next, deferred] = row
  const s = JSON.parse(json!) as Omit<MessageSummary, 'status' | 'recipient_count' | 'delivered_count' | 'stuck'> & { org_id?: string }
  const { org_id: _org, ...rest } = s
  if (typeof scheduledAt === 'string') rest.scheduled_at = scheduledAt
  const recipientCount = rn !== null && rn !== undefined ? Number(rn) : recipientAddresses(s).length
  const m = { ...rest, status: (status ?? 'queued') as MessageStatus }
  const timing = attemptTiming(m, Number(deferred ?? 0), typeof next === 'string' ? Number(next) : undefined, now, graceMs)
  // Messages recorded before tags existed have none.
  return { ...m, tags: rest.tags ?? [], recipient_count: recipientCount, delivered_count: Number(delivered ?? 0), ...timing }
}
