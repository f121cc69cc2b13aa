import { DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream'
import {
  AUDIT_SUBJECTS, STREAM_AUDIT, EVENT_SUBJECTS, INBOUND_SUBJECTS, MESSAGE_CONTENT_SUBJECTS, OUTBOUND_SUBJECTS, WEBHOOK_JOB_SUBJECTS,
  STREAM_EVENTS, STREAM_INBOUND, STREAM_MESSAGE_CONTENT, STREAM_OUTBOUND, STREAM_WEBHOOK_JOBS
} from './subjects.ts'
import { storeShareBytes } from './store_budget.ts'
import { DEFAULT_AUDIT_RETENTION_DAYS, NS_PER_MS, type StreamSettings, type StreamSpec } from './jetstream_specs.ts'

/** The streams of the JetStream table (jetstream_table.ts), with the limits each is held to. */

/** Re-publishes of the same message id within this window are dropped by JetStream (gateway publish retries). */
export const OUTBOUND_DUPLICATE_WINDOW_MS = 10 * 60_000 // 10 min
/** Largest queued message the outbound stream stores. */
export const OUTBOUND_MAX_MSG_BYTES = 12 * 1024 * 1024
const DAY_MS = 24 * 3600_000
export const EVENTS_MAX_AGE_MS = 30 * DAY_MS // 30 days of events for the read API and webhook replays
/** Events and webhook jobs carry deterministic ids; a re-publish within this window is dropped. */
const EVENTS_DUPLICATE_WINDOW_MS = 2 * 60_000
/**
 * With content recording off (0 days) the stream stays, since every process ensures the same table, and keeps
 * what an earlier setting recorded only this long: the shortest `max_age` the server accepts beside the stream's
 * duplicate window (nats-server refuses a window longer than `max_age`). A `max_age` of 0 would mean forever.
 */
export const MESSAGE_CONTENT_OFF_MAX_AGE_MS = EVENTS_DUPLICATE_WINDOW_MS
/** A job waits at most through the whole default schedule (~63 h); a week leaves room for long outages. */
export const WEBHOOK_JOBS_MAX_AGE_MS = 7 * 24 * 3600_000
/** A job republished with the same message id inside this window (an SMTP client retrying after a lost 250) is dropped. */
export const INBOUND_DUPLICATE_WINDOW_MS = 10 * 60_000 // 10 min
/** Largest job message; a raw message that fits in it with its job travels inside the job (`storeInline`). */
export const INBOUND_JOB_MAX_BYTES = 64 * 1024

/**
 * The most entries OB_AUDIT keeps of one organisation: past it that organisation's oldest go, so an organisation
 * changing things in a loop shortens its own history, never another's.
 */
export const AUDIT_MAX_ENTRIES_PER_SCOPE = 100_000

/** The `max_age` of OB_MESSAGE_CONTENT for a retention of `days` whole days. */
export function messageContentMaxAgeMs (days: number): number {
  return days === 0 ? MESSAGE_CONTENT_OFF_MAX_AGE_MS : days * DAY_MS
}

/** The streams. */
export function streamTable (s: StreamSettings): StreamSpec[] {
  return [
    {
      part: 'core',
      purpose: 'queued messages, one subject per shard; a message leaves when the engine acknowledges its final outcome',
      config: {
        name: STREAM_OUTBOUND,
        subjects: [OUTBOUND_SUBJECTS],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        num_replicas: s.replicas,
        duplicate_window: OUTBOUND_DUPLICATE_WINDOW_MS * NS_PER_MS,
        // Owed work: a full queue refuses new messages (the send answers 503 `queue_full`), never drops one.
        discard: DiscardPolicy.New,
        max_bytes: storeShareBytes(s.storeBytes, STREAM_OUTBOUND),
        max_msg_size: OUTBOUND_MAX_MSG_BYTES
      }
    },
    {
      part: 'core',
      purpose: 'delivery, tracking and inbound events, kept 30 days for the read API and webhooks',
      config: {
        name: STREAM_EVENTS,
        subjects: [EVENT_SUBJECTS],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        num_replicas: s.replicas,
        duplicate_window: EVENTS_DUPLICATE_WINDOW_MS * NS_PER_MS,
        max_age: EVENTS_MAX_AGE_MS * NS_PER_MS,
        // History for the read API: when full the oldest events go, so an outcome is always recorded and the
        // delivery that frees the queue never waits for room.
        discard: DiscardPolicy.Old,
        max_bytes: storeShareBytes(s.storeBytes, STREAM_EVENTS)
      }
    },
    {
      part: 'core',
      purpose: 'the content of each message as rendered for sending (subject, html, text, headers, attachment names, ' +
        'no attachment bytes), compressed, kept OB_MESSAGE_CONTENT_RETENTION_DAYS days (30 by default) for GET /v1/messages/{id}/content',
      config: {
        name: STREAM_MESSAGE_CONTENT,
        subjects: [MESSAGE_CONTENT_SUBJECTS],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        num_replicas: s.replicas,
        duplicate_window: EVENTS_DUPLICATE_WINDOW_MS * NS_PER_MS,
        max_age: messageContentMaxAgeMs(s.messageContentRetentionDays) * NS_PER_MS,
        max_msgs_per_subject: 1,
        allow_direct: true,
        discard: DiscardPolicy.Old,
        max_bytes: storeShareBytes(s.storeBytes, STREAM_MESSAGE_CONTENT)
      }
    },
    {
      part: 'core',
      purpose: 'the audit log: one entry per change to an organisation\'s configuration, one subject per organisation, ' +
        'kept OB_AUDIT_RETENTION_DAYS days (365 by default) for GET /v1/audit-log',
      config: {
        name: STREAM_AUDIT,
        subjects: [AUDIT_SUBJECTS],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
        num_replicas: s.replicas,
        duplicate_window: EVENTS_DUPLICATE_WINDOW_MS * NS_PER_MS,
        max_age: (s.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS) * DAY_MS * NS_PER_MS,
        max_msgs_per_subject: AUDIT_MAX_ENTRIES_PER_SCOPE,
        // reads walk one organisation's subject with direct gets
        allow_direct: true,
        // History: when full the oldest entries go, so recording a change never waits for room or refuses it.
        discard: DiscardPolicy.Old,
        max_bytes: storeShareBytes(s.storeBytes, STREAM_AUDIT)
      }
    },
    webhookJobStream(s.replicas, s.storeBytes),
    {
      part: 'inbound',
      purpose: 'received mail waiting to be processed (the raw message is in the object store, or inline when small)',
      config: {
        name: STREAM_INBOUND,
        subjects: [INBOUND_SUBJECTS],
        retention: RetentionPolicy.Workqueue,
        storage: StorageType.File,
        num_replicas: s.replicas,
        duplicate_window: INBOUND_DUPLICATE_WINDOW_MS * NS_PER_MS,
        discard: DiscardPolicy.New,
        max_bytes: storeShareBytes(s.storeBytes, STREAM_INBOUND),
        max_msg_size: INBOUND_JOB_MAX_BYTES
      }
    }
  ]
}

/** The webhook job stream; the gateway ensures it on its own (stores/webhooks) to publish test events. */
export function webhookJobStream (replicas: number, storeBytes: number): StreamSpec {
  return {
    part: 'webhooks',
    purpose: 'webhook delivery attempts waiting to be made, one subject per shard; a job leaves once its attempt is acknowledged',
    config: {
      name: STREAM_WEBHOOK_JOBS,
      subjects: [WEBHOOK_JOB_SUBJECTS],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      num_replicas: replicas,
      duplicate_window: EVENTS_DUPLICATE_WINDOW_MS * NS_PER_MS,
      max_age: WEBHOOK_JOBS_MAX_AGE_MS * NS_PER_MS,
      discard: DiscardPolicy.New,
      max_bytes: storeShareBytes(storeBytes, STREAM_WEBHOOK_JOBS)
    }
  }
}
