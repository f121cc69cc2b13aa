import { createPrivateKey } from 'node:crypto';
import { addressDomain } from '../../protocol/mod.js';
import { classifyAccepted, classifyError, tryNextHost } from './classify.js';
import { ComposedMessage } from './compose.js';
import { SubmittedMessage } from './raw_submission.js';
import { MxResolver } from './mx.js';
import { relayDestination } from './transports.js';
import { destinationClass } from '../../stores/metrics/mod.js';
import { DeliveryStateChanges, DeliveryStateWriter } from '../delivery_state_layout.js';
const MAX_MX_TRIED = 3;
const MAX_CLASSED_HOSTS = 10_000;
/**
 * A stable code for a failed Redis command: the socket's (`ECONNREFUSED`, `ECONNRESET`…), else the kind of a
 * Redis error reply, which RESP defines as its first word (`WRONGTYPE`, `OOM`, `READONLY`, `NOSCRIPT`), else the
 * error's name (ioredis reports a command timeout as a plain `Error`).
 */
export function redisErrorCode(err) {
    if (!(err instanceof Error))
        return 'unknown';
    const code = err.code;
    if (typeof code === 'string')
        return code;
    if (err.name === 'ReplyError')
        return /^[A-Z]+/.exec(err.message)?.[0] ?? err.name;
    return err.name;
}
/**
 * One delivery attempt of one message inside a shard's thread (its content rendered already): per recipient route → throttle →
 * compose once per message, per recipient splice and sign (DKIM), SMTP → classify. Never throws: every recipient ends with an outcome.
 */
export class Deliverer {
    settings;
    transports;
    throttle;
    mx;
    relay;
    keys = new Map();
    /** MX host → destination class (metrics); bounded like any per-host cache. */
    classes = new Map();
    secret;
    /** The return-path key of the last task; a new one arrives only when the keys rotate. */
    verpKey;
    state;
    constructor(settings, transports, throttle, redis) {
        this.settings = settings;
        this.transports = transports;
        this.throttle = throttle;
        this.mx = new MxResolver(settings.dnsServers, settings.allowPrivate);
        if (settings.relay !== undefined)
            this.relay = relayDestination(settings.relay);
        this.secret = Buffer.from(settings.secret);
        this.state = new DeliveryStateWriter(redis);
    }
    async run(task) {
        if (this.verpKey?.id !== task.verpKey.id)
            this.verpKey = { id: task.verpKey.id, secret: Buffer.from(task.verpKey.secret) };
        let message;
        try {
            const content = task.message;
            const dkim = [{ domain: task.domain.name, selector: task.domain.selector, key: this.dkimKey(task.domain.id, task.domain.selector, task.domain.privateKey) }];
            const ed = task.domain.ed25519;
            if (ed !== undefined)
                dkim.push({ domain: task.domain.name, selector: ed.selector, key: this.dkimKey(task.domain.id, ed.selector, ed.privateKey) });
            const ctx = { publicUrl: this.settings.publicUrl, secret: this.secret, domain: task.domain.name, dkim, verpKey: this.verpKey };
            const submitted = task.message.submitted;
            message = submitted !== undefined ? new SubmittedMessage(task.message, submitted.raw, ctx) : new ComposedMessage(task.message, content, ctx);
        }
        catch (err) {
            const at = new Date().toISOString();
            return { results: task.recipients.map((rcpt) => ({ rcpt, at, outcome: { kind: 'failed', category: 'unbuildable', reason: err.message } })) };
        }
        const unrecorded = [];
        const attempts = [];
        const results = await Promise.all(task.recipients.map(async (rcpt) => {
            const outcome = await this.one(message, rcpt, attempts);
            const result = { rcpt, outcome, at: new Date().toISOString() };
            if (outcome.kind === 'delivered' || outcome.kind === 'bounced') {
                const code = await this.recordSent(task.message.id, result);
                if (code !== undefined)
                    unrecorded.push({ rcpt, code });
            }
            return result;
        }));
        return unrecorded.length > 0 ? { results, unrecorded, attempts } : { results, attempts };
    }
    async one(message, rcpt, attempts) {
        let dests;
        try {
            dests = this.relay !== undefined ? [this.relay] : await this.mxDestinations(addressDomain(rcpt));
        }
        catch (err) {
            return classifyError(err);
        }
        let outcome = { kind: 'deferred', response: 'no mail host tried' };
        // built and signed once, whichever host takes it
        let mail;
        for (let i = 0; i < dests.length; i++) {
            const dest = dests[i];
            let sentAt = 0;
            try {
                const wait = await this.throttle.check(dest.host);
                if (wait > 0)
                    return { kind: 'throttled', retryAfterMs: wait };
                mail ??= message.forRecipient(rcpt);
                sentAt = performance.now();
                const info = await this.transports.get(dest).sendMail(mail);
                // one envelope recipient per transaction: resolving means it was accepted
                return this.measured(attempts, dest, sentAt, classifyAccepted(info));
            }
            catch (err) {
                outcome = classifyError(err);
                if (sentAt > 0)
                    this.measured(attempts, dest, sentAt, outcome);
                if (!tryNextHost(err))
                    return outcome;
            }
        }
        return outcome;
    }
    /** Notes one SMTP transaction for the main thread's metrics; the class of a host is worked out once. */
    measured(attempts, dest, sentAt, outcome) {
        let destination = this.relay !== undefined ? 'relay' : this.classes.get(dest.host);
        if (destination === undefined) {
            if (this.classes.size >= MAX_CLASSED_HOSTS)
                this.classes.clear();
            this.classes.set(dest.host, destination = destinationClass(dest.host));
        }
        if (outcome.kind !== 'throttled')
            attempts.push({ destination, result: outcome.kind, seconds: (performance.now() - sentAt) / 1000 });
        return outcome;
    }
    /**
     * Writes the final SMTP reply of a recipient to the message's delivery state the moment it arrives, from
     * this thread, so that a crash right after the remote 250 finds it and does not send again. Only a crash
     * between the 250 and this write (one Redis round trip) can still repeat a delivery. A failed write does not
     * change the outcome (the main thread records it again with the final events); it only widens that window
     * until then, so it is reported: the code of the failure, for the main thread to log. The replies arriving in
     * one turn of the thread's event loop are written together (DeliveryStateWriter), each write atomic.
     */
    async recordSent(messageId, result) {
        const err = await this.state.write(messageId, new DeliveryStateChanges().sent(result));
        return err === undefined ? undefined : redisErrorCode(err);
    }
    /** Up to MAX_MX_TRIED hosts in preference order; the next is tried only when no server answered. */
    async mxDestinations(domain) {
        const hosts = await this.mx.route(domain);
        return hosts.slice(0, MAX_MX_TRIED).map((h) => ({ host: h.host, connectTo: h.ip, port: this.settings.outboundPort, secure: false }));
    }
    dkimKey(domainId, selector, privateKey) {
        const id = `${domainId}:${selector}`;
        let cached = this.keys.get(id);
        // a selector keeps its key, but compare anyway (cheaper than parsing): a key replaced under the same selector
        // must never sign with the old one
        if (cached?.pem !== privateKey) {
            // parsing the PEM costs ~0.1 ms; a KeyObject is reused for every signature of the domain
            cached = { pem: privateKey, key: createPrivateKey(privateKey) };
            this.keys.set(id, cached);
        }
        return cached.key;
    }
}
//# sourceMappingURL=deliver.js.map