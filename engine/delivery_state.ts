import type { Redis } from 'ioredis'
import {
  DeliveryStateChanges, DeliveryStateWriter, deliveryStateKey, parseDeliveryState, type RecipientState
} from './delivery_state_layout.ts'

/**
 * The main thread's reads and writes of the delivery state (layout: delivery_state_layout.ts). The shard threads
 * write only the final SMTP replies, on their own connection (actor/deliver.ts).
 */
export class DeliveryState {
  private readonly writer: DeliveryStateWriter

  constructor (private readonly redis: Redis) {
    this.writer = new DeliveryStateWriter(redis)
  }

  async load (messageId: string): Promise<Map<string, RecipientState>> {
    return parseDeliveryState(await this.redis.hgetall(deliveryStateKey(messageId)))
  }

  /** Writes the changes and renews the expiry, atomically, batched with the other messages of the turn. */
  async save (messageId: string, changes: DeliveryStateChanges): Promise<void> {
    if (changes.empty) return
    const err = await this.writer.write(messageId, changes)
    if (err !== undefined) throw err
  }

  async markPublished (messageId: string, recipients: readonly string[]): Promise<void> {
    if (recipients.length === 0) return
    const changes = new DeliveryStateChanges()
    for (const r of recipients) changes.published(r)
    await this.redis.hset(deliveryStateKey(messageId), changes.fields())
  }
}
