import { SMTPServer } from 'smtp-server';
function parseHeaders(raw) {
    const end = raw.indexOf('\r\n\r\n');
    const head = raw.subarray(0, end === -1 ? raw.length : end).toString('utf8').replace(/\r\n[ \t]+/g, ' ');
    const out = new Map();
    for (const line of head.split('\r\n')) {
        const colon = line.indexOf(':');
        if (colon <= 0)
            continue;
        const name = line.slice(0, colon).trim().toLowerCase();
        if (!out.has(name))
            out.set(name, line.slice(colon + 1).trim());
    }
    return out;
}
/** Local-part prefix → the permanent RCPT reply the sink gives it. */
const PERMANENT = [
    ['permfail', 550, '5.1.1 mailbox unavailable'],
    ['policy', 550, '5.7.1 message refused by policy: sender reputation'],
    ['toobig', 552, '5.3.4 message size exceeds fixed limit'],
    ['full', 552, '5.2.2 mailbox full']
];
export class SmtpSink {
    server;
    port;
    messages = [];
    /** Every RCPT reply the sink gave, in order: `<address> <code>`. */
    rcptLog = [];
    accepted = 0;
    /** SMTP sessions opened with the sink, whatever became of them. */
    connections = 0;
    tempfails = new Map();
    waiters = [];
    constructor(server, port) {
        this.server = server;
        this.port = port;
    }
    static async start(opts = {}) {
        let sink;
        const tempfailTimes = opts.tempfailTimes ?? 1;
        const slowMs = opts.slowMs ?? 3000;
        const keepRaw = opts.keepRaw ?? true;
        const record = opts.record ?? true;
        const server = new SMTPServer({
            authOptional: true,
            disabledCommands: ['AUTH'],
            disableReverseLookup: true,
            hideSTARTTLS: opts.hideStartTls ?? false,
            logger: false,
            size: 30 * 1024 * 1024,
            onConnect(_session, callback) {
                sink.connections++;
                callback();
            },
            onRcptTo(address, _session, callback) {
                const local = address.address.slice(0, address.address.lastIndexOf('@')).toLowerCase();
                const permanent = PERMANENT.find(([prefix]) => local.startsWith(prefix));
                if (permanent !== undefined) {
                    sink.rcptLog.push(`${address.address} ${permanent[1]}`);
                    const err = new Error(permanent[2]);
                    err.responseCode = permanent[1];
                    callback(err);
                    return;
                }
                if (local.startsWith('tempfail')) {
                    const seen = sink.tempfails.get(address.address) ?? 0;
                    const times = /^tempfail(\d+)times/.exec(local);
                    if (seen < (times !== null ? Number(times[1]) : tempfailTimes)) {
                        sink.tempfails.set(address.address, seen + 1);
                        sink.rcptLog.push(`${address.address} 451`);
                        const err = new Error('4.7.1 try again later');
                        err.responseCode = 451;
                        callback(err);
                        return;
                    }
                }
                sink.rcptLog.push(`${address.address} 250`);
                callback();
            },
            onData(stream, session, callback) {
                const chunks = [];
                stream.on('data', (c) => chunks.push(c));
                stream.on('end', () => {
                    const raw = Buffer.concat(chunks);
                    const rcptTo = session.envelope.rcptTo.map((r) => r.address);
                    const receivedAt = Date.now();
                    const finish = () => {
                        const headers = record ? parseHeaders(raw) : new Map();
                        if (record) {
                            sink.messages.push({
                                mailFrom: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
                                rcptTo,
                                raw: keepRaw ? raw : Buffer.alloc(0),
                                headers,
                                messageId: headers.get('message-id') ?? '',
                                secure: session.secure,
                                receivedAt
                            });
                        }
                        sink.accepted++;
                        callback(null, 'Message queued as sink');
                        const w = sink.waiters;
                        sink.waiters = [];
                        for (const wake of w)
                            wake();
                    };
                    if (rcptTo.some((r) => r.toLowerCase().startsWith('slow')))
                        setTimeout(finish, slowMs);
                    else
                        finish();
                });
            }
        });
        const port = await new Promise((resolve, reject) => {
            server.once('error', reject);
            server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve(server.server.address().port));
        });
        server.on('error', () => { });
        sink = new SmtpSink(server, port);
        return sink;
    }
    get url() {
        return `smtp://127.0.0.1:${this.port}`;
    }
    /** Messages accepted for `rcpt` (envelope recipient, case-insensitive). */
    to(rcpt) {
        const r = rcpt.toLowerCase();
        return this.messages.filter((m) => m.rcptTo.some((x) => x.toLowerCase() === r));
    }
    /** Resolves when `predicate` holds, checked after every accepted message; rejects after `timeoutMs`. */
    async until(predicate, timeoutMs = 15_000) {
        const deadline = Date.now() + timeoutMs;
        while (!predicate()) {
            const left = deadline - Date.now();
            if (left <= 0)
                throw new Error('sink: condition not met in time');
            await new Promise((resolve) => {
                const t = setTimeout(resolve, Math.min(left, 200));
                this.waiters.push(() => { clearTimeout(t); resolve(); });
            });
        }
    }
    async close() {
        await new Promise((resolve) => this.server.close(() => resolve()));
    }
}
//# sourceMappingURL=smtp_sink.js.map