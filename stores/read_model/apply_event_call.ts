import { bareAddress, envelopeOf, recipientStatusAfter, STATUS_RANK, type EventRecord } from '../../protocol/mod.ts'
import { READ_MODEL_KEYS as K, READ_MODEL_RETENTION_MS, STATS_RETENTION_MS, hourBucket } from './message_store_keys.ts'
import { eventStream, eventStreamKeys, eventTagKeys, eventTags } from './tag_index.ts'

/** The keys and arguments of apply_event.lua for one event. */
export function applyCall (
  e: EventRecord, retention = { messagesMs: READ_MODEL_RETENTION_MS, eventsMs: READ_MODEL_RETENTION_MS }
): { keys: string[], args: Array<string | number> } {
  const parsed = Date.parse(e.timestamp)
  const ts = Number.isFinite(parsed) ? parsed : Date.now()
  const org = e.org_id
  const mid = e.message_id ?? (typeof e.data.message_id === 'string' ? e.data.message_id : undefined)
  const hour = hourBucket(ts)
  const keys = [K.event(org, e.id), K.eventOwner(e.id),
    K.events(org, 'live'), K.eventsByType(org, 'live', e.type), K.stats(org, 'live', hour),
    K.events(org, 'test'), K.eventsByType(org, 'test', e.type), K.stats(org, 'test', hour)]
  if (mid !== undefined) keys.push(K.message(org, mid), K.messageEvents(org, mid))
  const tags = eventTags(e.data)
  keys.push(...eventTagKeys(org, tags, hour))
  // the stream's index and stats hash ride as one more tag (the script counts them in ARGV[15])
  const stream = eventStream(e.data)
  if (stream !== undefined) keys.push(...eventStreamKeys(org, stream, hour))
  const indexed = tags.length + (stream === undefined ? 0 : 1)
  const status = recipientStatusAfter(e.type)
  const rcpt = typeof e.data.to === 'string' ? bareAddress(e.data.to) : ''
  const endsAttempt = e.type === 'delivered' || e.type === 'deferred' || e.type === 'bounced' || e.type === 'failed'
  const next = e.type === 'deferred' && typeof e.data.next_attempt_at === 'string' ? Date.parse(e.data.next_attempt_at) : NaN
  const args = [JSON.stringify(envelopeOf(e)), ts, e.id, e.type, retention.eventsMs, Date.now() - retention.eventsMs,
    STATS_RETENTION_MS, status ?? '', status === undefined ? 0 : STATUS_RANK[status], mid ?? '', K.messagesByStatusPrefix(org, 'live'),
    K.messagesByStatusPrefix(org, 'test'), rcpt, endsAttempt ? '1' : '0', indexed, K.messagesDue(org, 'live'),
    K.messagesDue(org, 'test'), Number.isFinite(next) ? next : '', org, retention.messagesMs,
    e.type === 'bounced' ? bounceReason(e.data) : '']
  return { keys, args }
}

/** A bounce's reason as a list row shows it: the SMTP code, then the receiver's words (`550 5.1.1 mailbox unknown`). */
export function bounceReason (data: Record<string, unknown>): string {
  const code = typeof data.bounce_code === 'string' ? data.bounce_code.trim() : ''
  const text = typeof data.bounce_message === 'string' ? data.bounce_message.trim() : ''
  const reason = code !== '' && !text.startsWith(code) ? `${code} ${text}` : text
  // bounded: the reply of a remote server is not ours to store whole in every row
  return reason.trim().slice(0, 300)
}
