import { createHash } from 'node:crypto';
/**
 * The closed set of event types. Every one of them is published to `ob.evt.<org_id>.<type>` as an
 * EventRecord; webhooks, the read model and the live stream all read that one stream.
 */
export const EVENT_TYPES = ['delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound.received', 'failed'];
/** Types a webhook may subscribe to (`inbound` is an alias of `inbound.received`); `failed` is internal. */
export const SUBSCRIBABLE_EVENT_TYPES = ['delivered', 'bounced', 'deferred', 'opened', 'clicked', 'unsubscribed', 'complained', 'inbound', 'inbound.received'];
/** Message status as the read API shows it. */
export const MESSAGE_STATUSES = ['queued', 'scheduled', 'sending', 'delivered', 'deferred', 'bounced', 'complained', 'failed', 'canceled'];
/** The webhook envelope of an event, in the order users see it. */
export function envelopeOf(e) {
    return { id: e.id, type: e.type, timestamp: e.timestamp, data: e.data };
}
/**
 * Deterministic event ids: the same outcome of the same attempt always gets the same id, so a redelivered
 * message that emits its events again is deduplicated by JetStream (Nats-Msg-Id) and by receivers.
 */
export function eventId(...parts) {
    const h = createHash('sha256').update(parts.join('\u0000')).digest();
    const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
    let out = 'evt_';
    for (let i = 0; i < 26; i++)
        out += alphabet[h[i] & 31];
    return out;
}
/**
 * The one way an event record is made, so every publisher stores the same shape (key order included: the
 * stored JSON is what webhooks sign and receivers compare). `timestamp` is when the event happened; it
 * defaults to now. `environment`: the message's (a live event's record stays as it was before sandbox events were
 * marked).
 */
export function eventRecord(id, type, orgId, data, messageId, timestamp = new Date().toISOString(), environment = 'live') {
    return { id, type, timestamp, org_id: orgId, ...(messageId !== undefined ? { message_id: messageId } : {}), data, ...(environment === 'test' ? { environment } : {}) };
}
/**
 * `{tags}` for the data of an event about a message with tags, `{}` for one without: an untagged message's events
 * stay byte for byte what they were before tags existed (event ids and stored bytes are what receivers compare).
 */
export function tagsField(tags) {
    return tags === undefined || tags.length === 0 ? {} : { tags };
}
/** The status a message takes when an event of this type happens to it (undefined: no change). */
export function statusAfter(type) {
    switch (type) {
        case 'delivered': return 'delivered';
        case 'bounced': return 'bounced';
        case 'deferred': return 'deferred';
        case 'complained': return 'complained';
        case 'failed': return 'failed';
        default: return undefined;
    }
}
//# sourceMappingURL=events.js.map