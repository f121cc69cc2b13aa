/** An error answer of the Outbox API, with its fields as the API words them. */
export class OutboxApiError extends Error {
    name = 'OutboxApiError';
    status;
    code;
    field;
    errors;
    details;
    /** Seconds to wait before retrying (429, 503), from `error.retry_after` or the `Retry-After` header. */
    retryAfter;
    /** `error.request_id`, or the `X-Request-Id` header. */
    requestId;
    constructor(status, body, headers) {
        super(body.message);
        this.status = status;
        this.code = body.code;
        this.field = body.field;
        this.errors = body.errors ?? [];
        this.details = body.details;
        this.retryAfter = body.retry_after ?? parseRetryAfter(headers?.get('retry-after') ?? null);
        this.requestId = body.request_id ?? headers?.get('x-request-id') ?? undefined;
    }
    /** Builds the error from any HTTP answer; a body that is not the error format keeps the status. */
    static from(status, text, headers) {
        let body;
        try {
            const parsed = JSON.parse(text);
            if (typeof parsed?.error?.code === 'string' && typeof parsed.error.message === 'string')
                body = parsed.error;
        }
        catch { /* not JSON: fall through */ }
        return new OutboxApiError(status, body ?? { code: `http_${status}`, message: text.trim().slice(0, 300) || `HTTP ${status}` }, headers);
    }
}
/** The request never got an HTTP answer (connection refused, reset, DNS) after all attempts. */
export class OutboxConnectionError extends Error {
    name = 'OutboxConnectionError';
    // eslint-disable-next-line @typescript-eslint/no-useless-constructor -- narrows the signature: a message is required
    constructor(message, options) {
        super(message, options);
    }
}
/** `Retry-After` as seconds: delta-seconds or an HTTP date. */
export function parseRetryAfter(value) {
    if (value === null || value === '')
        return undefined;
    if (/^\d+$/.test(value.trim()))
        return Number(value.trim());
    const at = Date.parse(value);
    return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
//# sourceMappingURL=errors.js.map