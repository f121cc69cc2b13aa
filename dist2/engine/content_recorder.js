import { contentView } from './content_view.js';
/**
 * Records each message's content view (GET /v1/messages/{id}/content) when the engine first takes it up: off the
 * gateway's send path, with the content the engine has anyway (joined back when it was stored apart). The first
 * delivery of a stream message records it; a later one (a retry, a scheduled message waking) records it only when
 * it is missing, which costs one direct get. A failure is logged and leaves the message to be sent as usual; the
 * next delivery tries again. An engine of an installation that records no content (OB_MESSAGE_CONTENT_RETENTION_DAYS
 * of 0) runs without one, so that costs nothing per message.
 */
export class ContentRecorder {
    store;
    log;
    constructor(store, log) {
        this.store = store;
        this.log = log;
    }
    async record(msg, deliveryCount) {
        try {
            if (deliveryCount > 1 && await this.store.has(msg.id))
                return;
            await this.store.put(await contentView(msg));
        }
        catch (err) {
            this.log.warn({ err, message_id: msg.id }, 'recording the message content failed; the next delivery records it');
        }
    }
}
//# sourceMappingURL=content_recorder.js.map