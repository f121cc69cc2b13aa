import { ApiError, inlineLimit, splitContent } from '../../protocol/mod.js';
import { isJetStreamFull } from '../../stores/clients/mod.js';
import { openContentStore } from '../../stores/content/mod.js';
/**
 * Keeps large messages within any NATS server's `max_payload`: a message whose encoding is over
 * `inlineLimit(max_payload)` (at most 512 KB) is published with a `content_ref`, its content stored beforehand
 * as an object (protocol/queued_content.ts). The caller answers 202 only after both are acknowledged.
 */
export class LargeContent {
    nc;
    config;
    store;
    constructor(nc, config) {
        this.nc = nc;
        this.config = config;
    }
    encode(msg) {
        const data = Buffer.from(JSON.stringify(msg));
        const maxPayload = this.nc.info?.max_payload;
        if (maxPayload === undefined || data.length <= inlineLimit(maxPayload))
            return { data };
        const split = splitContent(msg);
        return { data: split.message, content: split.content };
    }
    /** Stores the content of message `id`; resolves once JetStream holds all of it. */
    async put(id, content) {
        try {
            this.store ??= openContentStore(this.nc, this.config);
            await (await this.store.catch((err) => { this.store = undefined; throw err; })).put(id, content);
        }
        catch (err) {
            if (isJetStreamFull(err))
                throw queueFullError(err);
            throw new ApiError('service_unavailable', 'The message store did not confirm the message in time; retry shortly with the same Idempotency-Key.', { cause: err, retryAfter: 1 });
        }
    }
}
/**
 * Seconds a client waits before retrying a send the full store refused: room comes back as queued mail is
 * delivered, which takes longer than a connection hiccup.
 */
export const QUEUE_FULL_RETRY_AFTER_S = 30;
/** The answer to a send JetStream refused for lack of room (its stream, or the object store, at its share). */
export function queueFullError(cause) {
    return new ApiError('queue_full', 'The message store is full, so nothing was queued; queued mail is still being delivered, which frees room. ' +
        'Retry later with the same Idempotency-Key.', { cause, retryAfter: QUEUE_FULL_RETRY_AFTER_S });
}
//# sourceMappingURL=large_content.js.map