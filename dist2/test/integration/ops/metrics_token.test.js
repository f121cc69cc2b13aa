import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { TestOutbox } from '../../helpers/outbox.js';
/**
 * With OB_METRICS_TOKEN set, GET /metrics answers only a request carrying it as a bearer token: on the HTTP port
 * of a process running the gateway, and on OB_METRICS_PORT of one without it. Unset, it stays open (the default
 * that prometheus_scrape.test.ts scrapes).
 */
const TOKEN = 'metrics-token-0123456789abcdefghijklmnop';
let all;
let engine;
let open;
before(async () => {
    all = await TestOutbox.start({ env: { OB_METRICS_TOKEN: TOKEN } });
    engine = await TestOutbox.start({ env: { OB_ROLE: 'engine', OB_METRICS_TOKEN: TOKEN }, nats: all.nats, redis: all.redisServer });
    open = await TestOutbox.start({ nats: all.nats, redis: all.redisServer });
});
after(async () => {
    await open.close();
    await engine.close();
    await all.close();
});
async function scrape(url, authorization) {
    const res = await request(url, { headers: authorization !== undefined ? { authorization } : {} });
    return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}
const refusals = [undefined, 'Bearer wrong-token-0123456789abcdefghijklmnop', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, TOKEN];
test('the HTTP port\'s /metrics needs the bearer token when OB_METRICS_TOKEN is set (401 unauthorized otherwise)', async () => {
    for (const authorization of refusals) {
        const r = await scrape(`${all.baseUrl}/metrics`, authorization);
        assert.equal(r.status, 401, String(authorization));
        assert.equal(JSON.parse(r.text).error.code, 'unauthorized');
        assert.doesNotMatch(r.text, /outbox_/);
    }
    const ok = await scrape(`${all.baseUrl}/metrics`, `Bearer ${TOKEN}`);
    assert.equal(ok.status, 200);
    assert.match(ok.text, /^# TYPE outbox_/m);
    assert.equal((await scrape(`${all.baseUrl}/metrics`, `bearer  ${TOKEN}`)).status, 200, 'the scheme in any case');
    assert.equal((await scrape(`${all.baseUrl}/healthz`)).status, 200, 'health stays open');
});
test('the metrics port of a process without the gateway needs it too', async () => {
    const url = `http://127.0.0.1:${engine.proc.metricsPort}/metrics`;
    for (const authorization of refusals) {
        const r = await scrape(url, authorization);
        assert.equal(r.status, 401, String(authorization));
        assert.equal(r.headers['www-authenticate'], 'Bearer');
    }
    const ok = await scrape(url, `Bearer ${TOKEN}`);
    assert.equal(ok.status, 200);
    assert.match(ok.text, /^# TYPE outbox_/m);
});
test('without OB_METRICS_TOKEN, /metrics answers anyone, as before', async () => {
    const r = await scrape(`${open.baseUrl}/metrics`);
    assert.equal(r.status, 200);
    assert.match(r.text, /^# TYPE outbox_/m);
});
//# sourceMappingURL=metrics_token.test.js.map