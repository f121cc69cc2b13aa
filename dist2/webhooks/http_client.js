import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates } from 'node:tls';
import { isIP } from 'node:net';
import { Agent } from 'undici';
import { isBlockedAddress } from '../protocol/mod.js';
import { guardedLookup, makeResolve, SsrfBlockedError } from './ssrf.js';
export const USER_AGENT = 'Outbox-Webhooks/1';
/** Response bodies are read only to free the socket for keep-alive; past this we stop reading and close. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const KEEP_ALIVE_MS = 30_000;
/** Past MAX_RESPONSE_BYTES the response is not read further and its connection is closed. */
class ResponseTooLargeError extends Error {
    code = 'response_too_large';
}
/** Maps an undici / socket error to the short code shown in the delivery log. */
export function errorCode(err) {
    const e = err;
    if (err instanceof SsrfBlockedError || e?.code === 'ssrf_blocked')
        return 'ssrf_blocked';
    if (e?.cause !== undefined && e.cause?.code === 'ssrf_blocked')
        return 'ssrf_blocked';
    switch (e?.code) {
        case 'UND_ERR_HEADERS_TIMEOUT':
        case 'UND_ERR_BODY_TIMEOUT':
        case 'UND_ERR_CONNECT_TIMEOUT': return 'timeout';
        case 'ECONNREFUSED': return 'connection_refused';
        case 'ECONNRESET':
        case 'UND_ERR_SOCKET':
        case 'EPIPE': return 'connection_reset';
        case 'ENOTFOUND':
        case 'EAI_AGAIN':
        case 'ENODATA':
        case 'ESERVFAIL': return 'dns_error';
        case 'EHOSTUNREACH':
        case 'ENETUNREACH': return 'unreachable';
        default:
            if (typeof e?.code === 'string' && /CERT|SSL|TLS|SELF_SIGNED|ERR_TLS/i.test(e.code))
                return 'tls_error';
            return 'request_failed';
    }
}
const BASE_HEADERS = ['content-type', 'application/json', 'user-agent', USER_AGENT];
export class WebhookHttpClient {
    agents = new Map();
    agentOptions;
    sweeper;
    targets = new WeakMap();
    timeoutMs;
    allowPrivate;
    constructor(config) {
        this.timeoutMs = config.webhook.timeoutMs;
        this.allowPrivate = config.webhook.allowPrivate;
        // One secure context for every connection: building one from ~140 root certificates costs ~50 ms of CPU.
        const secureContext = config.webhook.caFile !== undefined
            ? createSecureContext({ ca: [...rootCertificates, readFileSync(config.webhook.caFile, 'utf8')] })
            : undefined;
        this.agentOptions = {
            connections: config.webhook.endpointConcurrency,
            pipelining: 1,
            keepAliveTimeout: KEEP_ALIVE_MS,
            keepAliveMaxTimeout: KEEP_ALIVE_MS,
            headersTimeout: this.timeoutMs,
            bodyTimeout: this.timeoutMs,
            connect: {
                timeout: this.timeoutMs,
                lookup: guardedLookup(makeResolve(config.dnsServers), this.allowPrivate),
                ...(secureContext !== undefined ? { secureContext } : {})
            }
        };
        // An agent idle for longer than its sockets live holds nothing worth keeping.
        this.sweeper = setInterval(() => { this.sweep(Date.now()); }, KEEP_ALIVE_MS);
        this.sweeper.unref();
    }
    agentOf(orgId) {
        let a = this.agents.get(orgId);
        if (a === undefined) {
            a = { agent: new Agent(this.agentOptions), inFlight: 0, lastUsed: 0 };
            this.agents.set(orgId, a);
        }
        return a;
    }
    sweep(now) {
        for (const [orgId, a] of this.agents) {
            if (a.inFlight === 0 && now - a.lastUsed > KEEP_ALIVE_MS) {
                this.agents.delete(orgId);
                a.agent.close().catch(() => { });
            }
        }
    }
    /**
     * One POST attempt; never throws. It uses undici's dispatch interface directly: the status decides, and
     * the response body is only read (up to 64 KB, then the connection is closed) to free the connection, so a
     * response stream per request would be pure overhead. `headers`: extra headers as name, value, name, value….
     * `orgId`: whose connections carry it.
     */
    async post(orgId, url, body, headers) {
        const start = performance.now();
        const done = (statusCode, error) => ({ statusCode, durationMs: Math.round(performance.now() - start), error });
        const t = this.target(url);
        if (t.refused !== null)
            return done(0, t.refused);
        const a = this.agentOf(orgId);
        a.inFlight++;
        return await new Promise((resolve) => {
            let status = 0;
            let received = 0;
            let abort;
            let settled = false;
            const byStatus = () => settle(status, status >= 200 && status < 300 ? null : `http_${status}`);
            const settle = (statusCode, error) => {
                if (settled)
                    return;
                settled = true;
                a.inFlight--;
                a.lastUsed = Date.now();
                resolve(done(statusCode, error));
            };
            const handler = {
                onConnect: (a) => { abort = a; },
                onHeaders: (statusCode) => { status = statusCode; return true; },
                onData: (chunk) => {
                    received += chunk.length;
                    if (received > MAX_RESPONSE_BYTES) {
                        byStatus();
                        abort?.(new ResponseTooLargeError());
                    }
                    return true;
                },
                onComplete: byStatus,
                // Once a status arrived it decides the outcome, whatever happens to the rest of the body.
                onError: (err) => { if (status !== 0)
                    byStatus();
                else
                    settle(0, errorCode(err)); }
            };
            a.agent.dispatch({ origin: t.origin, path: t.path, method: 'POST', headers: [...BASE_HEADERS, ...headers], body }, handler);
        });
    }
    /** What a URL's attempts need, worked out once per URL object (the dispatcher keeps one per webhook URL). */
    target(url) {
        let t = this.targets.get(url);
        if (t === undefined) {
            // An IP literal never goes through the lookup, so it is checked here.
            const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
            const refused = url.protocol !== 'https:'
                ? 'https_required'
                : !this.allowPrivate && isIP(host) !== 0 && isBlockedAddress(host) ? 'ssrf_blocked' : null;
            t = { origin: url.origin, path: url.pathname + url.search, refused };
            this.targets.set(url, t);
        }
        return t;
    }
    async close() {
        clearInterval(this.sweeper);
        await Promise.all([...this.agents.values()].map(async (a) => { await a.agent.close().catch(() => { }); }));
    }
    /** Drops open sockets at once (a drain past its deadline). */
    async destroy() {
        clearInterval(this.sweeper);
        await Promise.all([...this.agents.values()].map(async (a) => { await a.agent.destroy().catch(() => { }); }));
    }
}
//# sourceMappingURL=http_client.js.map