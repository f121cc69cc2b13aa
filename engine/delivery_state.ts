import type { Redis } from 'ioredis'
import { DELIVERY_STATE_TTL_S, DeliveryStateChanges, deliveryStateKey, parseDeliveryState, type RecipientState } from './delivery_state_layout.ts'

/**
 * The main thread's reads and writes of the delivery state (layout: delivery_state_layout.ts). The shard threads
 * write only the final SMTP replies, on their own connection (actor/deliver.ts).
 */
export class DeliveryState {
  constructor (private readonly redis: Redis) {}

  async load (messageId: string): Promise<Map<string, RecipientState>> {
    return parseDeliveryState(await this.redis.hgetall(deliveryStateKey(messageId)))
  }

  /** Writes the changes in one round trip and renews the expiry. */
  async save (messageId: string, changes: DeliveryStateChanges): Promise<void> {
    if (changes.empty) return
    const key = deliveryStateKey(messageId)
    await this.redis.multi().hset(key, changes.fields()).expire(key, DELIVERY_STATE_TTL_S).exec()
  }

  async markPublished (messageId: string, recipients: readonly string[]): Promise<void> {
    if (recipients.length === 0) return
    const changes = new DeliveryStateChanges()
    for (const r of recipients) changes.published(r)
    await this.redis.hset(deliveryStateKey(messageId), changes.fields())
  }
}
