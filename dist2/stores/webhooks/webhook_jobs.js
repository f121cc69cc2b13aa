import { jetstream } from '@nats-io/jetstream';
import { webhookJobSubject, shardOf, newId, webhookJobStream } from '../../protocol/mod.js';
import { ensureJetStream } from '../clients/mod.js';
export function isJobRef(job) {
    return job.event === undefined;
}
export function storedEventId(job) {
    return isJobRef(job) ? job.event_id : job.event.id;
}
export function webhookJobMsgId(job) {
    const id = `${storedEventId(job)}:${job.webhook_id}:${job.attempt}`;
    return job.run === undefined ? id : `${id}:${job.run}`;
}
/** Creates the job stream (without its consumers) or brings it to the table's settings; run lazily by the gateway. */
export async function ensureWebhookJobStream(nc, replicas, storeBytes) {
    await ensureJetStream(nc, { streams: [webhookJobStream(replicas, storeBytes)], consumers: [] });
}
const enc = new TextEncoder();
export async function publishWebhookJob(js, shards, job) {
    await js.publish(webhookJobSubject(shardOf(job.webhook_id, shards), job.webhook_id), enc.encode(JSON.stringify(job)), { msgID: webhookJobMsgId(job) });
}
/**
 * A job as stored by the parker: naming its event when its OB_EVENTS sequence is known (a WebhookJobRef),
 * else carrying it, reusing the event's JSON when the caller has it.
 */
export function webhookJobJson(job, eventJson) {
    if (isJobRef(job))
        return JSON.stringify(job);
    const { event, event_seq: seq, ...rest } = job;
    if (seq !== undefined)
        return refJson(seq, event.id, job);
    const tail = JSON.stringify(rest);
    const e = eventJson ?? JSON.stringify(event);
    return tail === '{}' ? `{"event":${e}}` : `{"event":${e},${tail.slice(1)}`;
}
/**
 * A WebhookJobRef's JSON written out field by field: a dead endpoint has one parked per event, and building
 * the ref object to stringify it cost as much as the rest of its parking. Ids are `prefix_` plus Crockford
 * base32 and need no escaping; anything else goes through JSON.stringify.
 */
function refJson(seq, eventId, job) {
    if (job.test !== undefined || job.replay !== undefined || job.run !== undefined || !plainId(eventId) || !plainId(job.org_id) || !plainId(job.webhook_id)) {
        const { event: _e, event_seq: _s, ...rest } = job;
        return JSON.stringify({ event_seq: seq, event_id: eventId, ...rest });
    }
    return `{"event_seq":${seq},"event_id":"${eventId}","org_id":"${job.org_id}","webhook_id":"${job.webhook_id}","attempt":${job.attempt},"due_at":${job.due_at},"created_at":${job.created_at}}`;
}
const PLAIN_ID = /^[a-z]+_[0-9a-z]+$/;
const plainId = (s) => typeof s === 'string' && PLAIN_ID.test(s);
/**
 * Queues webhook jobs the gateway makes (test events, replays, recovers) through the same delivery path as real
 * events. One per gateway, made by its main.ts; it holds the connection's JetStream client and ensures the job
 * stream once, on first use (again after a failed try). Nothing to close: it owns no connection.
 */
export class WebhookJobQueue {
    nc;
    opts;
    js;
    ready;
    constructor(nc, opts) {
        this.nc = nc;
        this.opts = opts;
        this.js = jetstream(nc);
    }
    /**
     * A test event for one webhook. It goes to that webhook only, whatever its subscriptions and status, is
     * attempted once, and is not stored as an event of the org.
     */
    async enqueueTest(webhook, type, now = Date.now()) {
        await this.streamReady();
        const event = { id: newId('evt', now), type, timestamp: new Date(now).toISOString(), data: sampleEventData(type, now) };
        await publishWebhookJob(this.js, this.opts.shards, { event, org_id: webhook.org_id, webhook_id: webhook.id, attempt: 1, due_at: now, created_at: now, test: true });
        return event.id;
    }
    /**
     * Jobs of real events (a replay or a recover) for one webhook, each carrying its event as stored, one stream
     * message per job. Resolves once every one is stored.
     */
    async enqueueJobs(jobs, eventJson) {
        await this.streamReady();
        await Promise.all(jobs.map(async (job, i) => {
            await this.js.publish(webhookJobSubject(shardOf(job.webhook_id, this.opts.shards), job.webhook_id), enc.encode(webhookJobJson(job, eventJson[i])), { msgID: webhookJobMsgId(job) });
        }));
    }
    /** The job stream exists: ensured on first use, again after a failed try. */
    async streamReady() {
        if (this.ready === undefined) {
            const ready = ensureWebhookJobStream(this.nc, this.opts.replicas, this.opts.storeBytes);
            ready.catch(() => { if (this.ready === ready)
                this.ready = undefined; });
            this.ready = ready;
        }
        await this.ready;
    }
}
/** Plausible `data` for a test event of each type, marked `test: true`. */
export function sampleEventData(type, now) {
    const at = new Date(now).toISOString();
    const base = { message_id: 'msg_test0000000000000000000000', to: 'recipient@example.com', metadata: { source: 'webhook_test' }, test: true };
    switch (type) {
        case 'delivered': return { ...base, delivered_at: at, smtp_response: '250 2.0.0 OK' };
        case 'bounced': return { ...base, bounce_type: 'hard', bounce_code: '550', bounce_message: '550 5.1.1 User unknown', bounce_category: 'mailbox', bounced_at: at };
        case 'deferred': return { ...base, deferred_at: at, smtp_response: '451 4.7.1 Try again later', attempt: 1, next_attempt_at: new Date(now + 60_000).toISOString() };
        case 'opened': return { ...base, opened_at: at, user_agent: 'Mozilla/5.0', ip_address: '203.0.113.7' };
        case 'clicked': return { ...base, clicked_at: at, url: 'https://example.com/', user_agent: 'Mozilla/5.0', ip_address: '203.0.113.7' };
        case 'unsubscribed': return { ...base, unsubscribed_at: at, method: 'link' };
        case 'complained': return { ...base, complained_at: at, feedback_type: 'abuse' };
        default: return {
            message_id: base.message_id,
            route_id: 'rt_test0000000000000000000000',
            from: 'sender@example.org',
            to: ['inbox@example.com'],
            subject: 'Test inbound message',
            text: 'This is a test inbound message.',
            html: '<p>This is a test inbound message.</p>',
            headers: { subject: 'Test inbound message' },
            authentication: { spf: 'pass', dkim: 'pass', dmarc: 'pass' },
            spam_score: 0.5,
            attachments: [],
            received_at: at,
            test: true
        };
    }
}
//# sourceMappingURL=webhook_jobs.js.map