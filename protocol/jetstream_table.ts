import { AckPolicy, DeliverPolicy, DiscardPolicy, RetentionPolicy, StorageType, type ConsumerConfig, type StreamConfig } from '@nats-io/jetstream'
import type { Config } from '../config/mod.ts'
import {
  CONSUMER_INBOUND, CONSUMER_PROJECTOR, CONSUMER_WEBHOOK_FANOUT, EVENT_SUBJECTS, INBOUND_SUBJECTS, KV_BUCKETS, KV_SHARD_LEASES, KV_SCHEDULE_DECISIONS, KV_IDEMPOTENCY,
  OBJ_INBOUND_RAW, OBJ_OUTBOUND_CONTENT, OUTBOUND_SUBJECTS, MESSAGE_CONTENT_SUBJECTS, STREAM_MESSAGE_CONTENT, STREAM_EVENTS, STREAM_INBOUND, STREAM_OUTBOUND, STREAM_WEBHOOK_JOBS, WEBHOOK_JOB_SUBJECTS,
  outboundConsumer, outboundSubject, webhookJobConsumer, webhookJobShardFilter
} from './subjects.ts'
import { kvShareBytes, objectStoreShareBytes, storeShareBytes } from './store_budget.ts'

/**
 * Every JetStream stream and durable consumer of an installation, with its settings: data only. `ensureJetStream`
 * (jetstream_ensure.ts) creates what is missing and brings what exists to these settings; docs/operations.md lists
 * the same entries and a unit test keeps the two equal.
 */

/** JetStream states durations in nanoseconds. */
export const NS_PER_MS = 1_000_000

/** Re-publishes of the same message id within this window are dropped by JetStream (gateway publish retries). */
export const OUTBOUND_DUPLICATE_WINDOW_MS = 10 * 60_000 // 10 min
/** Largest queued message the outbound stream stores. */
export const OUTBOUND_MAX_MSG_BYTES = 12 * 1024 * 1024
/**
 * Outbound consumers' `max_ack_pending`: deferred and scheduled messages wait as un-acked (nak'd with a delay)
 * messages, so this bounds how many may wait per shard; the pull size (shard capacity) bounds work in hand.
 */
export const OUTBOUND_MAX_ACK_PENDING = 50_000
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
/** An apply is one Lua call, far below this even under load. */
const PROJECTOR_ACK_WAIT_MS = 30_000
const PROJECTOR_MAX_ACK_PENDING = 2048
/** A job waits at most through the whole default schedule (~63 h); a week leaves room for long outages. */
export const WEBHOOK_JOBS_MAX_AGE_MS = 7 * 24 * 3600_000
/** Slack over the webhook request timeout before the server hands an unacknowledged message to another process. */
export const WEBHOOK_ACK_WAIT_SLACK_MS = 30_000
const WEBHOOK_FANOUT_MAX_ACK_PENDING = 20_000
/** A job republished with the same message id inside this window (an SMTP client retrying after a lost 250) is dropped. */
export const INBOUND_DUPLICATE_WINDOW_MS = 10 * 60_000 // 10 min
/**
 * Raw messages are deleted once processed; the TTL only bounds what a crash between storing a message and
 * publishing its job leaves behind (the sender got 451 and retries, so nothing is lost).
 */
export const INBOUND_RAW_TTL_MS = 7 * 24 * 3600_000 // 7 days
/**
 * A job is redelivered after these waits without an ack (the last repeats); processing one message takes well
 * under a second. The server keeps the first step as the consumer's `ack_wait`.
 */
const INBOUND_BACKOFF_MS = [1_000, 5_000, 30_000, 60_000]
/**
 * The consumer gives a failing job up itself (inbound/consumer.ts), but not while the analysis threads
 * fail: then the job comes back however long that lasts. The server's own limit only ends a job that has come back
 * for as long as its raw message is kept (7 days at one delivery a minute). Not -1 (unlimited): nats-server 2.9
 * refuses that together with `backoff`.
 */
const INBOUND_MAX_DELIVER = Math.ceil(INBOUND_RAW_TTL_MS / INBOUND_BACKOFF_MS.at(-1)!)
/** Largest job message; a raw message that fits in it with its job travels inside the job (`storeInline`). */
export const INBOUND_JOB_MAX_BYTES = 64 * 1024

/** What the streams depend on: the settings of the configuration that change stream settings. */
export interface StreamSettings {
  /** OB_NATS_REPLICAS */
  replicas: number
  /** OB_MESSAGE_CONTENT_RETENTION_DAYS: days OB_MESSAGE_CONTENT keeps a message's content; 0 records none. */
  messageContentRetentionDays: number
  /** OB_NATS_STORE_MB in bytes: the store divided among the streams and buckets (store_budget.ts). */
  storeBytes: number
}

/** What the table depends on: the few settings of the configuration that change stream or consumer settings. */
export interface JetStreamSettings extends StreamSettings {
  /** OB_ENGINE_SHARDS: one outbound consumer and one webhook job consumer per shard. */
  shards: number
  /** OB_ENGINE_ACK_WAIT_MS: the outbound consumers' `ack_wait`. */
  ackWaitMs: number
  /** OB_WEBHOOK_TIMEOUT_MS: webhook consumers wait this plus WEBHOOK_ACK_WAIT_SLACK_MS. */
  webhookTimeoutMs: number
}

export function streamSettings (config: Config): StreamSettings {
  return { replicas: config.nats.replicas, messageContentRetentionDays: config.messageContent.retentionDays, storeBytes: config.nats.storeBytes }
}

export function jetStreamSettings (config: Config): JetStreamSettings {
  return { ...streamSettings(config), shards: config.engine.shards, ackWaitMs: config.engine.ackWaitMs, webhookTimeoutMs: config.webhook.timeoutMs }
}

/** The `max_age` of OB_MESSAGE_CONTENT for a retention of `days` whole days. */
export function messageContentMaxAgeMs (days: number): number {
  return days === 0 ? MESSAGE_CONTENT_OFF_MAX_AGE_MS : days * DAY_MS
}

/**
 * Which part of a process ensures an entry: `core` at every start of every role (and by the CLI), the others
 * by the part of the engine or inbound role that uses them.
 */
export type JetStreamPart = 'core' | 'delivery' | 'projector' | 'webhooks' | 'inbound'

export interface StreamSpec {
  part: JetStreamPart
  /** What the entry is for, as docs/operations.md says it. */
  purpose: string
  config: Partial<StreamConfig> & { name: string, subjects: string[] }
}

export interface ConsumerSpec {
  part: JetStreamPart
  purpose: string
  stream: string
  config: Partial<ConsumerConfig> & { durable_name: string }
}

export interface JetStreamTable {
  streams: StreamSpec[]
  consumers: ConsumerSpec[]
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
      purpose: 'the content of each message as rendered for sending (subject, html, text, headers, attachment names, no attachment bytes), compressed, kept OB_MESSAGE_CONTENT_RETENTION_DAYS days (30 by default) for GET /v1/messages/{id}/content',
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

/** The durable consumers (all pull consumers with explicit acks). */
export function consumerTable (s: JetStreamSettings): ConsumerSpec[] {
  const shards = Array.from({ length: s.shards }, (_v, shard) => shard)
  const webhookAckWait = (s.webhookTimeoutMs + WEBHOOK_ACK_WAIT_SLACK_MS) * NS_PER_MS
  return [
    // Settings documented in docs/delivery.md: an engine extends ack_wait with `working()` during long SMTP
    // sessions, so it only expires when the engine died; retries and schedules are ours (`nak(delay)`).
    ...shards.map((shard): ConsumerSpec => ({
      part: 'delivery',
      purpose: 'outbound delivery of one shard, by the engine holding its lease',
      stream: STREAM_OUTBOUND,
      config: {
        durable_name: outboundConsumer(shard),
        filter_subject: outboundSubject(shard),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: s.ackWaitMs * NS_PER_MS,
        max_deliver: -1,
        max_ack_pending: OUTBOUND_MAX_ACK_PENDING,
        description: `Outbox engine: outbound shard ${shard}`
      }
    })),
    {
      part: 'projector',
      purpose: 'applies every event to the read model in Redis',
      stream: STREAM_EVENTS,
      config: {
        durable_name: CONSUMER_PROJECTOR,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: PROJECTOR_ACK_WAIT_MS * NS_PER_MS,
        max_ack_pending: PROJECTOR_MAX_ACK_PENDING
      }
    },
    {
      part: 'webhooks',
      purpose: 'turns every event into one delivery job per subscribed webhook',
      stream: STREAM_EVENTS,
      config: {
        durable_name: CONSUMER_WEBHOOK_FANOUT,
        ack_policy: AckPolicy.Explicit,
        // A new installation starts at new events; it does not replay 30 days of history to fresh webhooks.
        deliver_policy: DeliverPolicy.New,
        filter_subject: EVENT_SUBJECTS,
        // First attempts are made while the event is held, so this covers a request timeout plus slack.
        ack_wait: webhookAckWait,
        max_ack_pending: WEBHOOK_FANOUT_MAX_ACK_PENDING,
        max_deliver: -1
      }
    },
    ...shards.map((shard): ConsumerSpec => ({
      part: 'webhooks',
      purpose: 'webhook delivery jobs of one shard, shared by every engine process',
      stream: STREAM_WEBHOOK_JOBS,
      config: {
        durable_name: webhookJobConsumer(shard),
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: webhookJobShardFilter(shard),
        ack_wait: webhookAckWait,
        // Retries waiting for their time count as pending; a dead endpoint's backlog must not stall the shard.
        max_ack_pending: -1,
        max_deliver: -1
      }
    })),
    {
      part: 'inbound',
      purpose: 'processes received mail; a job failing 10 times is given up, unless the analysis threads failed',
      stream: STREAM_INBOUND,
      config: {
        durable_name: CONSUMER_INBOUND,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: INBOUND_BACKOFF_MS[0]! * NS_PER_MS,
        max_deliver: INBOUND_MAX_DELIVER,
        backoff: INBOUND_BACKOFF_MS.map((ms) => ms * NS_PER_MS)
      }
    }
  ]
}

export function jetStreamTable (s: JetStreamSettings): JetStreamTable {
  return { streams: streamTable(s), consumers: consumerTable(s) }
}

/** The entries one part of a process ensures. */
export function tablePart (table: JetStreamTable, ...parts: JetStreamPart[]): JetStreamTable {
  return {
    streams: table.streams.filter((e) => parts.includes(e.part)),
    consumers: table.consumers.filter((e) => parts.includes(e.part))
  }
}

/**
 * Settings of every key-value bucket (control plane and shard leases): only the latest value of a key is kept, in
 * the bucket's share of the store (the client makes buckets `discard: new`).
 */
export function kvBucketOptions (replicas: number, storeBytes: number, bucket: string): { replicas: number, history: number, max_bytes: number } {
  return { replicas, history: 1, max_bytes: kvShareBytes(storeBytes, bucket) }
}

/** The raw-message object store of inbound mail (the client makes object stores `discard: new`). */
export function inboundRawStoreOptions (replicas: number, storeBytes: number): { replicas: number, storage: StorageType, ttl: number, description: string, max_bytes: number } {
  return {
    replicas,
    storage: StorageType.File,
    ttl: INBOUND_RAW_TTL_MS * NS_PER_MS,
    description: 'Raw inbound messages awaiting processing',
    max_bytes: objectStoreShareBytes(storeBytes, OBJ_INBOUND_RAW)
  }
}

/**
 * A bucket whose entries expire `ttlMs` after they were written (a bucket-wide max age: nats-server 2.9 has no
 * per-key TTL), capped at its share of the store like every other bucket.
 */
export function expiringKvBucketOptions (replicas: number, ttlMs: number, storeBytes: number, bucket: string): {
  replicas: number, history: number, ttl: number, max_bytes: number
} {
  return { replicas, history: 1, ttl: ttlMs, max_bytes: kvShareBytes(storeBytes, bucket) }
}

/** Every bucket by name, for the operations guide. */
export const JETSTREAM_BUCKETS: ReadonlyArray<{ kind: 'kv' | 'object', name: string }> = [
  ...Object.values(KV_BUCKETS).map((name) => ({ kind: 'kv' as const, name })),
  { kind: 'kv', name: KV_SHARD_LEASES },
  { kind: 'kv', name: KV_SCHEDULE_DECISIONS },
  { kind: 'kv', name: KV_IDEMPOTENCY },
  { kind: 'object', name: OBJ_INBOUND_RAW },
  { kind: 'object', name: OBJ_OUTBOUND_CONTENT }
]
