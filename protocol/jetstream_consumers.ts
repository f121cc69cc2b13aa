import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream'
import {
  CONSUMER_INBOUND, CONSUMER_PROJECTOR, CONSUMER_WEBHOOK_FANOUT, EVENT_SUBJECTS,
  STREAM_EVENTS, STREAM_INBOUND, STREAM_OUTBOUND, STREAM_WEBHOOK_JOBS, outboundConsumer, outboundSubject, webhookJobConsumer,
  webhookJobShardFilter
} from './subjects.ts'
import { INBOUND_RAW_TTL_MS } from './jetstream_buckets.ts'
import { NS_PER_MS, type ConsumerSpec, type JetStreamSettings } from './jetstream_specs.ts'

/** The durable consumers of the JetStream table (jetstream_table.ts): who reads each stream, and how long a message may be held. */

/**
 * Outbound consumers' `max_ack_pending`: deferred and scheduled messages wait as un-acked (nak'd with a delay)
 * messages, so this bounds how many may wait per shard; the pull size (shard capacity) bounds work in hand.
 */
export const OUTBOUND_MAX_ACK_PENDING = 50_000
/** An apply is one Lua call, far below this even under load. */
const PROJECTOR_ACK_WAIT_MS = 30_000
const PROJECTOR_MAX_ACK_PENDING = 2048
/** Slack over the webhook request timeout before the server hands an unacknowledged message to another process. */
export const WEBHOOK_ACK_WAIT_SLACK_MS = 30_000
const WEBHOOK_FANOUT_MAX_ACK_PENDING = 20_000
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
