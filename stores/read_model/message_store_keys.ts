import { EVENTS_MAX_AGE_MS, type MessageStatus } from '../../protocol/mod.ts'

/** Live and sandbox (`ob_test_` key) traffic are indexed and counted apart; a message records which it is. */
export type Environment = 'live' | 'test'

/** The org's index prefix for one environment: live keys keep their original names, sandbox ones add `:test`. */
function scope (orgId: string, env: Environment): string {
  return env === 'live' ? `ob:{${orgId}}` : `ob:{${orgId}}:test`
}

/**
 * Redis key names of the read model. Every key of one organisation carries the hash tag `{<org_id>}`, so
 * a script that touches several of them stays on one slot should Redis ever be clustered.
 */
export const READ_MODEL_KEYS = {
  /**
   * Hash: summary JSON, status, status rank, created time, environment (`env`), recipient count (`rn`), delivered
   * recipients (`dn`), the `next_attempt_at` of its latest deferral in ms (`next`), and per recipient
   * `r:<address>` = `<status> <rank> <attempts> <last event ms>`.
   */
  message: (orgId: string, id: string) => `ob:{${orgId}}:msg:${id}`,
  /** Sorted set (score: event time in ms) of the message's event ids. */
  messageEvents: (orgId: string, id: string) => `ob:{${orgId}}:msg:${id}:evs`,
  /** Which organisation owns a message id: tells 403 from 404 without knowing the org first. */
  messageOwner: (id: string) => `ob:msgorg:${id}`,
  /** Sorted sets (score: created time in ms) of the org's message ids: all, by status, by recipient, by tag. */
  messages: (orgId: string, env: Environment) => `${scope(orgId, env)}:msgs`,
  messagesByStatusPrefix: (orgId: string, env: Environment) => `${scope(orgId, env)}:msgs:s:`,
  messagesByStatus: (orgId: string, env: Environment, status: MessageStatus) => `${scope(orgId, env)}:msgs:s:${status}`,
  /**
   * Sorted set, every score 0, members `<address> NUL <inverted created ms> NUL <id>`: ZRANGEBYLEX finds the
   * messages to any address starting with a prefix, newest first per address, in O(log n + page).
   */
  messagesByAddress: (orgId: string, env: Environment) => `${scope(orgId, env)}:msgs:addr`,
  /**
   * Sorted set of the messages waiting for a delivery attempt (queued, scheduled or deferred), scored by when that
   * attempt is due in ms: the send or scheduled time, or the `next_attempt_at` of the latest deferral. The messages
   * overdue are one range of it.
   */
  messagesDue: (orgId: string, env: Environment) => `${scope(orgId, env)}:msgs:due`,
  /** Sorted set (score: created time in ms) of the org's messages with one tag (tags are `[A-Za-z0-9_-]{1,64}`). */
  messagesTagged: (orgId: string, env: Environment, tag: string) => `${scope(orgId, env)}:msgs:tag:${tag}`,
  /** String: the event JSON; `SET NX` on it is also what makes applying an event idempotent. */
  event: (orgId: string, eventId: string) => `ob:{${orgId}}:ev:${eventId}`,
  /**
   * Which organisation owns an event id, written with the event JSON and expiring with it: tells 403 from 404 in one
   * read, without knowing the org first (so never by looking in every organisation).
   */
  eventOwner: (eventId: string) => `ob:evorg:${eventId}`,
  /** Sorted sets (score: event time in ms) of the org's event ids: all, and by type. */
  events: (orgId: string, env: Environment) => `${scope(orgId, env)}:evs`,
  eventsByType: (orgId: string, env: Environment, type: string) => `${scope(orgId, env)}:evs:t:${type}`,
  /** Sorted set (score: event time in ms) of the org's events about messages with one tag. */
  eventsTagged: (orgId: string, env: Environment, tag: string) => `${scope(orgId, env)}:evs:tag:${tag}`,
  /** Hash of counters (event type or `sent` → count) for one UTC hour, `yyyymmddhh`. */
  stats: (orgId: string, env: Environment, hour: string) => `${scope(orgId, env)}:stats:${hour}`,
  /** The same counters for the messages with one tag. */
  statsTagged: (orgId: string, env: Environment, tag: string, hour: string) => `${scope(orgId, env)}:stats:tag:${tag}:${hour}`,
  /**
   * The same three for one message stream (ids are `[a-z0-9-]{1,40}`), kept like a tag's: recorded from the stream the
   * queued message and its events carry (messages and events from before streams are in none).
   */
  messagesInStream: (orgId: string, env: Environment, stream: string) => `${scope(orgId, env)}:msgs:stream:${stream}`,
  eventsInStream: (orgId: string, env: Environment, stream: string) => `${scope(orgId, env)}:evs:stream:${stream}`,
  statsInStream: (orgId: string, env: Environment, stream: string, hour: string) => `${scope(orgId, env)}:stats:stream:${stream}:${hour}`
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
