import { Writable } from 'node:stream';
import { jetstream, DeliverPolicy } from '@nats-io/jetstream';
import { newId, outboundSubject, shardOf, STREAM_EVENTS } from '../../protocol/mod.js';
import { TestOutbox } from './outbox.js';
import { SmtpSink } from './smtp_sink.js';
const enc = new TextEncoder();
const dec = new TextDecoder();
/** A QueuedMessage as the gateway would publish it, from `sender@<org domain>`. */
export function queuedMessage(org, fields) {
    return {
        v: 1,
        id: newId('msg'),
        org_id: org.orgId,
        domain_id: org.domainId,
        key_id: 'key_00000000000000000000000000',
        environment: 'live',
        from: `Sender <sender@${org.domain}>`,
        cc: [],
        bcc: [],
        subject: 'Hello',
        html: '<p>Hello <a href="https://example.org/welcome">there</a></p>',
        text: 'Hello there',
        headers: {},
        metadata: { user: 'u1' },
        attachments: [],
        track_opens: true,
        track_clicks: true,
        suppressed: [],
        created_at: new Date().toISOString(),
        ...fields
    };
}
/** Publishes to the shard subject with Nats-Msg-Id = message id, exactly as the gateway does. */
export async function publishQueued(nc, config, msg) {
    await jetstream(nc).publish(outboundSubject(shardOf(msg.id, config.engine.shards)), enc.encode(JSON.stringify(msg)), { msgID: msg.id });
}
/** Reads every event of one organisation from OB_EVENTS as it is published. */
export class EventWatcher {
    events = [];
    stopFn;
    static async start(nc, orgId) {
        const w = new EventWatcher();
        const consumer = await jetstream(nc).consumers.get(STREAM_EVENTS, { filter_subjects: `ob.evt.${orgId}.>`, deliver_policy: DeliverPolicy.All });
        const messages = await consumer.consume();
        w.stopFn = () => { messages.stop(); };
        void (async () => {
            for await (const m of messages)
                w.events.push(JSON.parse(dec.decode(m.data)));
        })();
        return w;
    }
    of(messageId, type) {
        return this.events.filter((e) => e.message_id === messageId && (type === undefined || e.type === type));
    }
    async until(predicate, timeoutMs = 15_000) {
        const deadline = Date.now() + timeoutMs;
        while (!predicate()) {
            if (Date.now() > deadline)
                throw new Error(`events: condition not met in time; seen ${JSON.stringify(this.events.map((e) => `${e.type}:${String(e.data.to)}`))}`);
            await new Promise((resolve) => setTimeout(resolve, 50));
        }
    }
    stop() {
        this.stopFn?.();
    }
}
/**
 * An engine-only Outbox that relays every message to an SMTP sink of its own, one organisation, and a watcher of
 * that organisation's events: the setting of most engine scenarios.
 */
export async function startRelayScenario(opts = {}) {
    const sink = await SmtpSink.start(opts.sink);
    const logs = [];
    const stream = new Writable({ write(chunk, _enc, cb) { logs.push(JSON.parse(String(chunk))); cb(); } });
    const log = opts.logLevel === undefined ? undefined : { level: opts.logLevel, stream };
    const ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: sink.url, OB_ROLE: 'engine', ...opts.env }, ...(log !== undefined ? { log } : {}), ...(opts.shardThreadEntry !== undefined ? { shardThreadEntry: opts.shardThreadEntry } : {}) });
    const org = await ob.org();
    const events = await EventWatcher.start(ob.proc.nc, org.orgId);
    return {
        sink,
        ob,
        org,
        events,
        logs,
        async close() {
            events.stop();
            await ob.close();
            await sink.close();
        }
    };
}
//# sourceMappingURL=engine_env.js.map