import { bareAddress, envelopeOf, statusAfter, STATUS_RANK, type EventRecord } from '../../protocol/mod.ts'
import { READ_MODEL_KEYS as K, READ_MODEL_RETENTION_MS, STATS_RETENTION_MS, hourBucket } from './message_store_keys.ts'
import { eventTagKeys, eventTags } from './tag_index.ts'

/** The keys and arguments of apply_event.lua for one event. */
export function applyCall (e: EventRecord): { keys: string[], args: Array<string | number> } {
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
  const status = statusAfter(e.type)
  const rcpt = typeof e.data.to === 'string' ? bareAddress(e.data.to) : ''
  const endsAttempt = e.type === 'delivered' || e.type === 'deferred' || e.type === 'bounced' || e.type === 'failed'
  const next = e.type === 'deferred' && typeof e.data.next_attempt_at === 'string' ? Date.parse(e.data.next_attempt_at) : NaN
  const args = [JSON.stringify(envelopeOf(e)), ts, e.id, e.type, READ_MODEL_RETENTION_MS, Date.now() - READ_MODEL_RETENTION_MS,
    STATS_RETENTION_MS, status ?? '', status === undefined ? 0 : STATUS_RANK[status], mid ?? '', K.messagesByStatusPrefix(org, 'live'),
    K.messagesByStatusPrefix(org, 'test'), rcpt, endsAttempt ? '1' : '0', tags.length, K.messagesDue(org, 'live'),
    K.messagesDue(org, 'test'), Number.isFinite(next) ? next : '', org]
  return { keys, args }
}
