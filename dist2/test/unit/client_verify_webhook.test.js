import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { verifyWebhook } from '../../client/src/mod.js';
const secret = 'whsec_test_secret';
const body = '{"id":"evt_1","type":"delivered","timestamp":"2026-11-22T04:00:00.000Z","data":{"message_id":"msg_1"}}';
const sign = (t, raw, key = secret) => `t=${t},v1=${createHmac('sha256', key).update(`${t}.${raw}`).digest('hex')}`;
test('verifyWebhook accepts a valid signature over the raw body, string or bytes', async () => {
    const now = 1_800_000_000;
    assert.equal(await verifyWebhook(body, sign(now, body), secret, { now }), true);
    assert.equal(await verifyWebhook(new TextEncoder().encode(body), sign(now, body), secret, { now }), true);
});
test('verifyWebhook rejects a changed body, a wrong secret, a malformed header', async () => {
    const now = 1_800_000_000;
    assert.equal(await verifyWebhook(body + ' ', sign(now, body), secret, { now }), false);
    assert.equal(await verifyWebhook(body, sign(now, body, 'whsec_other'), secret, { now }), false);
    assert.equal(await verifyWebhook(body, 'v1=abc', secret, { now }), false);
    assert.equal(await verifyWebhook(body, '', secret, { now }), false);
    assert.equal(await verifyWebhook(body, null, secret, { now }), false);
});
test('verifyWebhook enforces the timestamp tolerance (default 300 s) both ways', async () => {
    const t = 1_800_000_000;
    assert.equal(await verifyWebhook(body, sign(t, body), secret, { now: t + 300 }), true);
    assert.equal(await verifyWebhook(body, sign(t, body), secret, { now: t + 301 }), false);
    assert.equal(await verifyWebhook(body, sign(t, body), secret, { now: t - 301 }), false);
    assert.equal(await verifyWebhook(body, sign(t, body), secret, { now: t + 900, tolerance: 1000 }), true);
});
test('verifyWebhook accepts the header when any v1 matches (secret rollover)', async () => {
    const now = 1_800_000_000;
    const good = sign(now, body).split(',')[1];
    assert.equal(await verifyWebhook(body, `t=${now},v1=${'0'.repeat(64)},${good}`, secret, { now }), true);
});
//# sourceMappingURL=client_verify_webhook.test.js.map