import { jetstream } from '@nats-io/jetstream';
import { STREAM_EVENTS, eventSubject } from '../../protocol/mod.js';
/**
 * Reads an organisation's events from OB_EVENTS (an ordered consumer from the start of the stream), as the
 * webhook sender would. `waitFor` resolves once `count` events of `type` are there, or rejects after `timeoutMs`.
 */
export class EventReader {
    orgId;
    events = [];
    listeners = new Set();
    stopFn;
    constructor(orgId) {
        this.orgId = orgId;
    }
    static async open(nc, orgId) {
        const r = new EventReader(orgId);
        const consumer = await jetstream(nc).consumers.get(STREAM_EVENTS, { filter_subjects: eventSubject(orgId, '>') });
        const messages = await consumer.consume();
        r.stopFn = () => { void messages.close(); };
        void (async () => {
            for await (const m of messages) {
                r.events.push(m.json());
                for (const l of r.listeners)
                    l();
            }
        })();
        return r;
    }
    of(type) {
        return this.events.filter((e) => e.type === type);
    }
    async waitFor(type, count = 1, timeoutMs = 10_000) {
        if (this.of(type).length >= count)
            return this.of(type);
        return await new Promise((resolve, reject) => {
            const timer = setTimeout(() => { this.listeners.delete(check); reject(new Error(`timed out waiting for ${count} ${type} event(s); have ${this.events.map((e) => e.type).join(',') || 'none'}`)); }, timeoutMs);
            const check = () => {
                if (this.of(type).length < count)
                    return;
                clearTimeout(timer);
                this.listeners.delete(check);
                resolve(this.of(type));
            };
            this.listeners.add(check);
        });
    }
    /** Lets anything in flight arrive, for assertions that something did NOT happen. */
    async settle(ms = 500) {
        await new Promise((resolve) => setTimeout(resolve, ms));
    }
    close() {
        this.stopFn?.();
    }
}
//# sourceMappingURL=events.js.map