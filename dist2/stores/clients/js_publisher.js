import { createInbox, headers as natsHeaders } from '@nats-io/transport-node';
/** JetStream did not acknowledge the publish in time (or the connection dropped it); it may still have stored it. */
export class PublishTimeoutError extends Error {
    code = 'publish_timeout';
    constructor(subject, timeoutMs) {
        super(`no acknowledgement for a publish to ${subject} within ${timeoutMs} ms`);
        this.name = 'PublishTimeoutError';
    }
}
/** JetStream refused the message (no stream for the subject, a limit, JetStream unavailable). */
export class PublishRejectedError extends Error {
    reason;
    apiCode;
    code = 'publish_rejected';
    constructor(subject, reason, apiCode) {
        super(`publish to ${subject} rejected: ${reason}`);
        this.reason = reason;
        this.apiCode = apiCode;
        this.name = 'PublishRejectedError';
    }
}
/** The encoded message is larger than the NATS server accepts (`max_payload`); nothing was sent. */
export class PayloadTooLargeError extends Error {
    size;
    limit;
    code = 'publish_too_large';
    constructor(size, limit) {
        super(`the message is ${size} bytes; the NATS server accepts at most ${limit}`);
        this.size = size;
        this.limit = limit;
        this.name = 'PayloadTooLargeError';
    }
}
const dec = new TextDecoder();
const SWEEP_MS = 250;
/**
 * JetStream publishes that wait for their PubAck on one long-lived reply subscription. The client's own
 * `js.publish` makes a request per message: a request object, a timer, a promise race and, once the answer is
 * in, an Error (with its stack) to cancel what already settled; on the inbound path that was a visible share of
 * the CPU per message. Here a publish is one map entry, and one sweep every 250 ms fails those past the timeout.
 * A publish is sent once (like `js.publish` without retries): the caller decides what a failure means. Every
 * failure is one of the three errors above.
 */
export class JsPublisher {
    nc;
    timeoutMs;
    prefix;
    pending = new Map();
    sub;
    next = 0;
    sweeper;
    constructor(nc, timeoutMs = 5000) {
        this.nc = nc;
        this.timeoutMs = timeoutMs;
        this.prefix = `${createInbox()}.`;
        this.sub = nc.subscribe(`${this.prefix}*`, { callback: (err, m) => { if (err === null)
                this.answer(m); } });
    }
    /** Throws PayloadTooLargeError when `data` exceeds the connected server's limit. */
    checkSize(data) {
        const limit = this.nc.info?.max_payload;
        if (limit !== undefined && data.byteLength > limit)
            throw new PayloadTooLargeError(data.byteLength, limit);
    }
    async publish(subject, data, opts = {}) {
        this.checkSize(data);
        const token = ++this.next;
        let headers = opts.headers;
        if (opts.msgID !== undefined) {
            headers ??= natsHeaders();
            headers.set('Nats-Msg-Id', opts.msgID);
        }
        return await new Promise((resolve, reject) => {
            this.pending.set(token, { subject, at: Date.now(), resolve, reject });
            this.sweeper ??= setInterval(() => { this.sweep(); }, SWEEP_MS);
            try {
                this.nc.publish(subject, data, { reply: this.prefix + String(token), ...(headers !== undefined ? { headers } : {}) });
            }
            catch (err) {
                // the connection is closed or draining
                this.pending.delete(token);
                reject(new PublishRejectedError(subject, err.message));
            }
        });
    }
    answer(m) {
        const token = Number(m.subject.slice(this.prefix.length));
        const p = this.pending.get(token);
        if (p === undefined)
            return; // answered after its timeout
        this.pending.delete(token);
        // No responders: no stream listens on the subject (or JetStream is down).
        if (m.data.length === 0 && m.headers?.code === 503) {
            p.reject(new PublishRejectedError(p.subject, 'no responders', 503));
            return;
        }
        let ack;
        try {
            ack = JSON.parse(dec.decode(m.data));
        }
        catch {
            p.reject(new PublishRejectedError(p.subject, 'unreadable acknowledgement'));
            return;
        }
        if (ack.error !== undefined) {
            p.reject(new PublishRejectedError(p.subject, ack.error.description ?? 'error', ack.error.err_code ?? ack.error.code));
            return;
        }
        if (typeof ack.stream !== 'string' || ack.stream === '') {
            p.reject(new PublishRejectedError(p.subject, 'invalid acknowledgement'));
            return;
        }
        ack.duplicate = ack.duplicate === true;
        p.resolve(ack);
    }
    sweep() {
        const limit = Date.now() - this.timeoutMs;
        for (const [token, p] of this.pending) {
            // Entries are in publish order: the first one still in time ends the sweep.
            if (p.at > limit)
                break;
            this.pending.delete(token);
            p.reject(new PublishTimeoutError(p.subject, this.timeoutMs));
        }
        if (this.pending.size === 0) {
            clearInterval(this.sweeper);
            this.sweeper = undefined;
        }
    }
    /** Fails what is still waiting and drops the subscription. */
    close() {
        this.sub.unsubscribe();
        clearInterval(this.sweeper);
        this.sweeper = undefined;
        for (const p of this.pending.values())
            p.reject(new PublishTimeoutError(p.subject, this.timeoutMs));
        this.pending.clear();
    }
}
//# sourceMappingURL=js_publisher.js.map