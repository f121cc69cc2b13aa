import { TurnBatch } from '../../stores/batching/mod.js';
/** How long an accepted message may wait for the read-model write: far inside the 1 s read-after-write bound. */
export const READ_MODEL_FLUSH_MS = 5; // 5 ms
/** Messages gathered before a write leaves without waiting for the timer. */
export const READ_MODEL_FLUSH_SIZE = 256;
/**
 * Writes accepted messages to the read model after their 202 has gone, many at a time: messages accepted within
 * a few milliseconds travel to Redis as one batched script instead of one write per request turn. The message
 * is already durable in JetStream, and the engine records it again from the queued message on delivery, so a
 * write this process never makes (it crashed) or that fails only delays the message becoming readable.
 */
export class ReadModelWriter {
    store;
    log;
    /**
     * A timer rather than the end of the turn: no caller waits on these writes (the reply has gone), so they gather
     * across the requests of a few milliseconds into one batch. Each write's failure is logged by itself, so the
     * batch answers every item at once.
     */
    batch = new TurnBatch({
        flush: async (accepted) => {
            this.write(accepted);
            return accepted.map(() => undefined);
        },
        maxItems: READ_MODEL_FLUSH_SIZE,
        after: READ_MODEL_FLUSH_MS
    });
    constructor(store, log) {
        this.store = store;
        this.log = log;
    }
    add(msg, status) {
        void this.batch.add({ msg, status });
    }
    /** Sends what is gathered now; the writes leave on the Redis connection ahead of anything issued later. */
    flush() {
        this.batch.flush();
    }
    /** Each message its own call: the read model's script batch sends the calls of this turn as one. */
    write(batch) {
        for (const { msg, status } of batch) {
            this.store.recordQueued(msg, status).catch((err) => {
                this.log.error({ err, messageId: msg.id }, 'recording a queued message failed; the engine records it on delivery');
            });
        }
    }
}
//# sourceMappingURL=read_model_writer.js.map