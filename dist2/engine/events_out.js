import { eventId, eventRecord, tagsField } from '../protocol/mod.js';
/**
 * Event records of deliveries. `data` always carries message_id, from, to (the one recipient), subject and
 * the message's metadata and tags (no `tags` field when it has none, so events of untagged messages keep the bytes
 * earlier versions stored), plus the fields of the type. Ids are deterministic — `eventId(message_id,
 * recipient, type, attempt)` with attempt 0 for outcomes that happen once per recipient — so an event
 * published again after a crash is dropped by JetStream's duplicate window and recognised by receivers.
 */
export class EventFactory {
    msg;
    subject;
    constructor(msg, subject) {
        this.msg = msg;
        this.subject = subject;
    }
    make(type, rcpt, at, fields, attempt = 0) {
        const m = this.msg;
        return eventRecord(eventId(m.id, rcpt, type, attempt), type, m.org_id, { message_id: m.id, from: m.from, to: rcpt, subject: this.subject, ...fields, metadata: m.metadata, ...tagsField(m.tags) }, m.id, at, m.environment === 'test' ? 'test' : 'live');
    }
}
//# sourceMappingURL=events_out.js.map