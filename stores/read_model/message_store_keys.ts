import { EVENTS_MAX_AGE_MS, type MessageStatus } from '../../protocol/mod.ts'

/**
 * Redis key names of the read model. Every key of one organisation carries the hash tag `{<org_id>}`, so
 * a script that touches several of them stays on one slot should Redis ever be clustered.
 */
export const READ_MODEL_KEYS = {
  /** Hash: summary JSON, status, status rank, created time. */
  message: (orgId: string, id: string) => `ob:{${orgId}}:msg:${id}`,
  /** Sorted set (score: event time in ms) of the message's event ids. */
  messageEvents: (orgId: string, id: string) => `ob:{${orgId}}:msg:${id}:evs`,
  /** Which organisation owns a message id: tells 403 from 404 without knowing the org first. */
  messageOwner: (id: string) => `ob:msgorg:${id}`,
  /** Sorted sets (score: created time in ms) of the org's message ids: all, by status, by recipient. */
  messages: (orgId: string) => `ob:{${orgId}}:msgs`,
  messagesByStatusPrefix: (orgId: string) => `ob:{${orgId}}:msgs:s:`,
  messagesByStatus: (orgId: string, status: MessageStatus) => `ob:{${orgId}}:msgs:s:${status}`,
  messagesTo: (orgId: string, address: string) => `ob:{${orgId}}:msgs:to:${address}`,
  /** Sorted set (score: created time in ms) of the org's messages with one tag (tags are `[A-Za-z0-9_-]{1,64}`). */
  messagesTagged: (orgId: string, tag: string) => `ob:{${orgId}}:msgs:tag:${tag}`,
  /** String: the event JSON; `SET NX` on it is also what makes applying an event idempotent. */
  event: (orgId: string, eventId: string) => `ob:{${orgId}}:ev:${eventId}`,
  /** Sorted sets (score: event time in ms) of the org's event ids: all, and by type. */
  events: (orgId: string) => `ob:{${orgId}}:evs`,
  eventsByType: (orgId: string, type: string) => `ob:{${orgId}}:evs:t:${type}`,
  /** Sorted set (score: event time in ms) of the org's events about messages with one tag. */
  eventsTagged: (orgId: string, tag: string) => `ob:{${orgId}}:evs:tag:${tag}`,
  /** Hash of counters (event type or `sent` → count) for one UTC hour, `yyyymmddhh`. */
  stats: (orgId: string, hour: string) => `ob:{${orgId}}:stats:${hour}`,
  /** The same counters for the messages with one tag. */
  statsTagged: (orgId: string, tag: string, hour: string) => `ob:{${orgId}}:stats:tag:${tag}:${hour}`
} as const

/** Messages and events are kept as long as the event stream keeps events (30 days), so a replay always dedupes. */
export const READ_MODEL_RETENTION_MS = EVENTS_MAX_AGE_MS
/** Hourly counters outlive messages: the statistics endpoint accepts ranges of up to 90 days. */
export const STATS_RETENTION_MS = 92 * 24 * 3600_000 // 92 days
export const STATS_MAX_RANGE_MS = 90 * 24 * 3600_000 // 90 days

/** `yyyymmddhh` of the UTC hour containing `ms`. */
export function hourBucket (ms: number): string {
  const d = new Date(ms)
  return String(d.getUTCFullYear()) +
    String(d.getUTCMonth() + 1).padStart(2, '0') +
    String(d.getUTCDate()).padStart(2, '0') +
    String(d.getUTCHours()).padStart(2, '0')
}
