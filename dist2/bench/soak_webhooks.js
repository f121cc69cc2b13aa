import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { STREAM_EVENTS, eventSubject } from '../protocol/mod.js';
import { HttpsReceiver } from '../test/helpers/https_receiver.js';
import { sleep } from '../test/integration/faults/fault_env.js';
export const REPLACED_EVENTS = ['delivered', 'bounced'];
/** How long a replaced webhook lives before it is deleted and another one created. */
const REPLACE_EVERY_MS = 5000;
/**
 * At most this long waiting for a webhook to receive every event it is owed before replacing it anyway (what it
 * has not received by then counts as lost). A user who deletes a webhook gives up its pending deliveries and
 * retries, as documented; waiting for them first keeps the check about loss, not about that choice.
 */
const DELIVERED_WAIT_MS = 60_000;
export class WebhookReplacer {
    receiver;
    nc;
    jsm;
    baseUrl;
    key;
    orgId;
    spans = [];
    running = true;
    loop;
    constructor(
    /** A receiver of its own that stays up, so a replaced webhook's attempts are not failed by the receiver faults. */
    receiver, nc, jsm, baseUrl, key, orgId) {
        this.receiver = receiver;
        this.nc = nc;
        this.jsm = jsm;
        this.baseUrl = baseUrl;
        this.key = key;
        this.orgId = orgId;
    }
    static async start(natsUrl, baseUrl, key, orgId) {
        const receiver = await HttpsReceiver.start();
        // Reconnects through the NATS restarts of the soak.
        const nc = await connect({ servers: natsUrl, maxReconnectAttempts: -1, reconnectTimeWait: 200 });
        const r = new WebhookReplacer(receiver, nc, await jetstreamManager(nc), baseUrl, key, orgId);
        r.loop = r.run();
        return r;
    }
    async run() {
        let n = 0;
        let current = await this.create(n++);
        while (this.running) {
            await sleep(REPLACE_EVERY_MS);
            if (!this.running)
                break;
            // Before the deletion is asked for: everything up to here is owed, and the webhook should have it all
            current.toSeq = await this.retry(async () => await this.lastEventSeq());
            const owed = await this.retry(async () => await this.owedIds(current));
            const deadline = Date.now() + DELIVERED_WAIT_MS;
            while (this.running && Date.now() < deadline && !this.hasAll(current, owed))
                await sleep(200);
            // Load over while it waits: it is not deleted (that would give up what it is still owed), it stays as the last.
            if (!this.running && !this.hasAll(current, owed)) {
                current.toSeq = undefined;
                break;
            }
            await this.remove(current);
            current = await this.create(n++);
        }
    }
    async create(n) {
        for (let attempt = 0;; attempt++) {
            // A fresh path per attempt: a create that timed out but happened must not blur another webhook's record.
            const path = `/replaced-${n}-${attempt}`;
            const r = await this.call('POST', '/v1/webhooks', { url: this.receiver.url(path), events: REPLACED_EVENTS });
            if (r.status === 201) {
                const span = { id: r.body.id, path, events: REPLACED_EVENTS, fromSeq: await this.retry(async () => await this.lastEventSeq()) };
                this.spans.push(span);
                return span;
            }
            await sleep(200);
        }
    }
    async remove(w) {
        for (;;) {
            const r = await this.call('DELETE', `/v1/webhooks/${w.id}`);
            if (r.status === 204 || r.status === 404)
                return;
            await sleep(200);
        }
    }
    async call(method, path, body) {
        try {
            const res = await fetch(this.baseUrl + path, {
                method,
                headers: { authorization: `Bearer ${this.key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
                ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
                signal: AbortSignal.timeout(5000)
            });
            const text = await res.text();
            return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
        }
        catch {
            return { status: 0 };
        }
    }
    async lastEventSeq() {
        return (await this.jsm.streams.info(STREAM_EVENTS)).state.last_seq;
    }
    /** Ids of the events of the organisation and of `w`'s types with a sequence in (fromSeq, toSeq]. */
    async owedIds(w) {
        const ids = [];
        const prefix = eventSubject(this.orgId, '');
        for (let seq = w.fromSeq + 1; seq <= w.toSeq; seq++) {
            const m = await this.jsm.streams.getMessage(STREAM_EVENTS, { seq }).catch(() => null);
            if (m === null || !m.subject.startsWith(prefix))
                continue;
            const e = m.json();
            if (w.events.includes(e.type))
                ids.push(e.id);
        }
        return ids;
    }
    hasAll(w, owed) {
        const got = new Set(this.receiver.on(w.path).map((r) => JSON.parse(r.rawBody.toString()).id));
        return owed.every((id) => got.has(id));
    }
    async retry(fn) {
        for (;;) {
            try {
                return await fn();
            }
            catch {
                await sleep(200);
            }
        }
    }
    /** Event ids each webhook received, by webhook id. */
    received() {
        const out = new Map();
        for (const s of this.spans)
            out.set(s.id, this.receiver.on(s.path).map((r) => ({ id: JSON.parse(r.rawBody.toString()).id, at: r.at })));
        return out;
    }
    /** Stops replacing; the last webhook stays and owes every event after its creation. */
    async stop() {
        this.running = false;
        await this.loop;
    }
    async close() {
        await this.nc.close().catch(() => { });
        await this.receiver.close().catch(() => { });
    }
}
//# sourceMappingURL=soak_webhooks.js.map