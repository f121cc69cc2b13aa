import { jetstreamManager } from '@nats-io/jetstream';
import { STREAM_EVENTS, envelopeOf } from '../protocol/mod.js';
/**
 * Reads back the event a parked job names (WebhookJobRef) from OB_EVENTS, once the job is about to be
 * attempted: work that goes back to the stream unread never costs a read.
 */
export class EventReader {
    nc;
    jsm;
    constructor(nc) {
        this.nc = nc;
    }
    /** The job with its event, or undefined when OB_EVENTS no longer holds that event. Rejects when NATS fails. */
    async job(ref) {
        this.jsm ??= jetstreamManager(this.nc);
        let jsm;
        try {
            jsm = await this.jsm;
        }
        catch (err) {
            this.jsm = undefined;
            throw err;
        }
        const stored = await jsm.streams.getMessage(STREAM_EVENTS, { seq: ref.event_seq });
        if (stored === null)
            return undefined;
        const record = stored.json();
        if (record?.id !== ref.event_id)
            return undefined;
        const { event_id: _eventId, ...job } = ref;
        return { ...job, event: envelopeOf(record) };
    }
}
//# sourceMappingURL=event_reader.js.map