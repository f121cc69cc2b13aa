import { jetstreamManager } from '@nats-io/jetstream';
/** 5 s: consumer info is one request per consumer; polling on a timer keeps a scrape from costing NATS anything. */
export const CONSUMER_POLL_MS = 5000;
const INFO_TIMEOUT_MS = 2000;
/**
 * Reads pending, acknowledgement-pending and redelivered counts of the JetStream consumers this process works
 * on, every CONSUMER_POLL_MS, into the `outbox_jetstream_consumer_*` gauges. A consumer whose info cannot be read
 * (NATS unreachable, consumer gone) drops out until it can, so a stale figure never looks current.
 */
export class ConsumerPoller {
    jsm;
    consumers;
    figures = new Map();
    timer;
    polling;
    constructor(jsm, consumers) {
        this.jsm = jsm;
        this.consumers = consumers;
    }
    static async start(nc, metrics, consumers, everyMs = CONSUMER_POLL_MS) {
        const poller = new ConsumerPoller(await jetstreamManager(nc, { timeout: INFO_TIMEOUT_MS }), consumers);
        for (const [name, pick] of [
            ['outbox_jetstream_consumer_pending', (f) => f.pending],
            ['outbox_jetstream_consumer_ack_pending', (f) => f.ackPending],
            ['outbox_jetstream_consumer_redelivered', (f) => f.redelivered]
        ]) {
            metrics.read(name, (set) => {
                for (const { stream, consumer } of consumers) {
                    const f = poller.figures.get(`${stream}/${consumer}`);
                    if (f !== undefined)
                        set(pick(f), { stream, consumer });
                }
            });
        }
        poller.polling = poller.poll();
        poller.timer = setInterval(() => { poller.polling ??= poller.poll(); }, everyMs);
        poller.timer.unref();
        return poller;
    }
    async poll() {
        await Promise.all(this.consumers.map(async ({ stream, consumer }) => {
            const key = `${stream}/${consumer}`;
            try {
                const info = await this.jsm.consumers.info(stream, consumer);
                this.figures.set(key, { pending: info.num_pending, ackPending: info.num_ack_pending, redelivered: info.num_redelivered });
            }
            catch {
                this.figures.delete(key);
            }
        }));
        this.polling = undefined;
    }
    async stop() {
        clearInterval(this.timer);
        await this.polling;
    }
}
//# sourceMappingURL=consumer_poller.js.map