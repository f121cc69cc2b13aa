import { AckPolicy, DeliverPolicy, jetstreamManager, type ConsumerConfig } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM_OUTBOUND, outboundSubject } from './protocol/subjects.ts'

/**
 * One durable pull consumer per shard on OB_OUTBOUND. Settings (documented in docs/delivery.md):
 * - explicit ack: a message leaves the work queue only when all its recipients have a final outcome;
 * - `ack_wait` = OB_ENGINE_ACK_WAIT_MS (60 s); an engine extends it with `working()` during long SMTP
 *   sessions, so it only expires when the engine died — then the message is delivered to the next engine;
 * - `max_deliver` -1: retries and schedules are ours (`nak(delay)`), JetStream never gives up on a message;
 * - `max_ack_pending` MAX_ACK_PENDING: deferred and scheduled messages wait as un-acked (nak'd with a delay)
 *   messages, so this bounds how many may wait per shard; the pull size (shard capacity) bounds work in hand.
 */
export const MAX_ACK_PENDING = 50_000
const NS_PER_MS = 1_000_000

export function consumerName (shard: number): string {
  return `ob_shard_${shard}`
}

export function consumerConfig (shard: number, ackWaitMs: number): Partial<ConsumerConfig> & { durable_name: string } {
  return {
    durable_name: consumerName(shard),
    filter_subject: outboundSubject(shard),
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: ackWaitMs * NS_PER_MS,
    max_deliver: -1,
    max_ack_pending: MAX_ACK_PENDING,
    description: `Outbox engine: outbound shard ${shard}`
  }
}

/** Creates the shard consumers, or brings existing ones to these settings; safe from every engine process. */
export async function ensureConsumers (nc: NatsConnection, shards: readonly number[], ackWaitMs: number): Promise<void> {
  const jsm = await jetstreamManager(nc)
  for (const shard of shards) {
    const cfg = consumerConfig(shard, ackWaitMs)
    try {
      await jsm.consumers.info(STREAM_OUTBOUND, cfg.durable_name)
      const { durable_name: _n, filter_subject: _f, deliver_policy: _d, ...mutable } = cfg
      await jsm.consumers.update(STREAM_OUTBOUND, cfg.durable_name, mutable)
    } catch (err) {
      if (!/not found/i.test(String((err as Error).message))) throw err
      await jsm.consumers.add(STREAM_OUTBOUND, cfg)
    }
  }
}
