import { operations } from './generated.js';
import { OutboxApiError, OutboxConnectionError } from './errors.js';
import { DEFAULT_RETRY, retryDelay, sleep } from './retry.js';
/** A random UUID v4. Browsers offer randomUUID only on https (or localhost) pages; getRandomValues works everywhere. */
function newIdempotencyKey() {
    const c = globalThis.crypto;
    if (typeof c.randomUUID === 'function')
        return c.randomUUID();
    const b = c.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
/**
 * A typed client of the Outbox HTTP API. Every operation of the API is a method, grouped by resource
 * (`client.apiKeys.create(…)`, `client.messages.get(id)`); see generated.ts. Errors are OutboxApiError.
 */
export class OutboxClient {
    baseUrl;
    retry;
    #apiKey;
    #fetch;
    #onRetry;
    constructor(options) {
        if (typeof options.apiKey !== 'string' || !options.apiKey.startsWith('ob_'))
            throw new TypeError('apiKey must be an Outbox API key (ob_live_… or ob_test_…)');
        this.#apiKey = options.apiKey;
        this.baseUrl = (options.baseUrl ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
        this.retry = { ...DEFAULT_RETRY, ...options.retry };
        this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
        this.#onRetry = options.onRetry;
        Object.assign(this, operations(async (spec, opts) => await this.request(spec, opts)));
    }
    /** Any API call, with the client's authentication, retries and error typing. */
    async request(req, options = {}) {
        const url = new URL(this.baseUrl + req.path);
        for (const [name, value] of Object.entries(req.query ?? {})) {
            if (value !== undefined && value !== null)
                url.searchParams.set(name, String(value));
        }
        const headers = { authorization: `Bearer ${this.#apiKey}`, accept: 'application/json', ...options.headers };
        if (req.body !== undefined)
            headers['content-type'] = 'application/json';
        if (req.idempotent === true)
            headers['idempotency-key'] = options.idempotencyKey ?? newIdempotencyKey();
        // Retrying a request whose answer was lost is only safe when it cannot act twice.
        const canRetryNetwork = req.method === 'GET' || req.method === 'DELETE' || headers['idempotency-key'] !== undefined;
        const body = req.body === undefined ? undefined : JSON.stringify(req.body);
        for (let attempt = 1;; attempt++) {
            let error;
            try {
                const res = await this.#fetch(url, { method: req.method, headers, body, signal: options.signal });
                const text = await res.text();
                if (res.ok)
                    return (req.text === true ? text : (text === '' ? undefined : JSON.parse(text)));
                error = OutboxApiError.from(res.status, text, res.headers);
            }
            catch (err) {
                if (options.signal?.aborted === true)
                    throw err;
                error = err;
            }
            const delayMs = retryDelay(error, attempt, this.retry, canRetryNetwork);
            if (delayMs === undefined) {
                if (error instanceof OutboxApiError)
                    throw error;
                throw new OutboxConnectionError(`${req.method} ${req.path} failed after ${attempt} attempt(s): ${error?.message ?? String(error)}`, { cause: error });
            }
            this.#onRetry?.({ attempt, delayMs, error });
            await sleep(delayMs, options.signal);
        }
    }
}
//# sourceMappingURL=client.js.map