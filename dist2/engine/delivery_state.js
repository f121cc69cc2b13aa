import { DeliveryStateChanges, DeliveryStateWriter, deliveryStateKey, parseDeliveryState } from './delivery_state_layout.js';
/**
 * The main thread's reads and writes of the delivery state (layout: delivery_state_layout.ts). The shard threads
 * write only the final SMTP replies, on their own connection (actor/deliver.ts).
 */
export class DeliveryState {
    redis;
    writer;
    constructor(redis) {
        this.redis = redis;
        this.writer = new DeliveryStateWriter(redis);
    }
    async load(messageId) {
        return parseDeliveryState(await this.redis.hgetall(deliveryStateKey(messageId)));
    }
    /** Writes the changes and renews the expiry, atomically, batched with the other messages of the turn. */
    async save(messageId, changes) {
        if (changes.empty)
            return;
        const err = await this.writer.write(messageId, changes);
        if (err !== undefined)
            throw err;
    }
    async markPublished(messageId, recipients) {
        if (recipients.length === 0)
            return;
        const changes = new DeliveryStateChanges();
        for (const r of recipients)
            changes.published(r);
        await this.redis.hset(deliveryStateKey(messageId), changes.fields());
    }
}
//# sourceMappingURL=delivery_state.js.map