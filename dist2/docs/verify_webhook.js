/**
 * Verifying Outbox webhook signatures: copy this file into your project. It has no dependencies beyond
 * Node's own `node:crypto`.
 *
 *   import { verifyWebhook } from './verify_webhook.ts'
 *   // rawBody: the request body exactly as received (Buffer or string), BEFORE any JSON parsing
 *   const result = verifyWebhook(rawBody, req.headers['x-service-signature'], process.env.OUTBOX_WEBHOOK_SECRET)
 *   if (!result.ok) return res.writeHead(401).end()   // reject with 401
 *   const event = JSON.parse(rawBody.toString('utf8'))  // { id, type, timestamp, data }; dedupe by event.id
 *
 * The header is `X-Service-Signature: t=<unix seconds>,v1=<lowercase hex HMAC-SHA256>`; the signed string is
 * `<t>.<raw body>` and the key is the webhook secret (`whsec_…`). Requests older or newer than the tolerance
 * (default 300 s) are refused against replay.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
export function verifyWebhook(rawBody, header, secret, opts = {}) {
    const toleranceS = opts.toleranceS ?? 300;
    const nowS = Math.floor((opts.now ?? Date.now()) / 1000);
    const value = Array.isArray(header) ? header.join(',') : header;
    if (value === undefined || value === '')
        return { ok: false, reason: 'malformed_header' };
    let t;
    const signatures = [];
    for (const part of value.split(',')) {
        const eq = part.indexOf('=');
        if (eq < 0)
            continue;
        const key = part.slice(0, eq).trim();
        const v = part.slice(eq + 1).trim();
        if (key === 't')
            t = v;
        else if (key === 'v1' && /^[0-9a-f]{64}$/.test(v))
            signatures.push(v);
    }
    if (t === undefined || !/^\d{1,12}$/.test(t) || signatures.length === 0)
        return { ok: false, reason: 'malformed_header' };
    const timestamp = Number(t);
    if (Math.abs(nowS - timestamp) > toleranceS)
        return { ok: false, reason: 'timestamp_out_of_tolerance', timestamp };
    const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
    let ok = false;
    for (const s of signatures) {
        if (timingSafeEqual(expected, Buffer.from(s, 'hex')))
            ok = true;
    }
    return ok ? { ok: true, timestamp } : { ok: false, reason: 'signature_mismatch', timestamp };
}
//# sourceMappingURL=verify_webhook.js.map