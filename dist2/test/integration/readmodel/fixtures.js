import { jetstream } from '@nats-io/jetstream';
import { MessageStore } from '../../../stores/read_model/mod.js';
import { newId, eventId, eventSubject } from '../../../protocol/mod.js';
/** A message as the send path records it, after JetStream accepted it. */
export async function queue(ob, org, over = {}, status = 'queued') {
    const createdAt = over.created_at ?? new Date().toISOString();
    const msg = {
        v: 1,
        id: newId('msg', Date.parse(createdAt)),
        org_id: org.orgId,
        domain_id: org.domainId,
        key_id: 'key_test',
        environment: 'live',
        from: `sender@${org.domain}`,
        to: ['rcpt@example.net'],
        cc: [],
        bcc: [],
        subject: 'Hello',
        html: '<p>hi</p>',
        headers: {},
        metadata: { order: '42' },
        attachments: [],
        track_opens: true,
        track_clicks: true,
        suppressed: [],
        created_at: createdAt,
        ...over
    };
    await new MessageStore(ob.proc.redis).recordQueued(msg, status);
    return msg;
}
export function event(org, messageId, type, at = new Date(), extra = {}) {
    return {
        id: eventId(messageId, type, at.toISOString(), JSON.stringify(extra)),
        type,
        timestamp: at.toISOString(),
        org_id: org.orgId,
        message_id: messageId,
        data: { message_id: messageId, to: 'rcpt@example.net', ...extra }
    };
}
/** Publishes to OB_EVENTS exactly as the delivery engine does; `msgId` overrides the dedupe id. */
export async function publish(ob, e, msgId = e.id) {
    await jetstream(ob.proc.nc).publish(eventSubject(e.org_id, e.type), JSON.stringify(e), { msgID: msgId });
}
/** Polls until `check` returns a value (the projector runs asynchronously); fails after `timeoutMs`. */
export async function eventually(check, what, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const v = await check();
        if (v !== undefined)
            return v;
        if (Date.now() > deadline)
            throw new Error(`timed out waiting for ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
    }
}
//# sourceMappingURL=fixtures.js.map