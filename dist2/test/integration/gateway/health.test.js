import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
let ob;
before(async () => { ob = await TestOutbox.start(); });
after(async () => { await ob.close(); });
test('healthz answers ok with a request id', async () => {
    const r = await ob.request('GET', '/healthz');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'ok' });
    assert.match(r.headers.get('x-request-id') ?? '', /^req_[0-9a-z]{26}$/);
});
test('a valid incoming X-Request-Id is echoed, an invalid one replaced', async () => {
    const good = await ob.request('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    assert.equal(good.headers.get('x-request-id'), 'abc-123');
    const bad = await ob.request('GET', '/healthz', { headers: { 'x-request-id': 'has space' } });
    assert.notEqual(bad.headers.get('x-request-id'), 'has space');
});
test('readyz is 200 while NATS answers and Redis takes writes, and says so per dependency', async () => {
    const r = await ob.request('GET', '/readyz');
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { status: 'ok', checks: { nats: 'ok', redis: 'ok', queue: 'ok' } });
});
test('unknown path is 404 not_found in the error format, wrong method is 405', async () => {
    const r = await ob.request('GET', '/v1/nope');
    assert.equal(r.status, 404);
    assert.equal(r.body.error.code, 'not_found');
    assert.equal(r.body.error.request_id, r.headers.get('x-request-id'));
    const m = await ob.request('DELETE', '/healthz');
    assert.equal(m.status, 405);
    assert.equal(m.body.error.code, 'method_not_allowed');
    assert.equal(m.headers.get('allow'), 'GET');
});
test('metrics are Prometheus text and count requests', async () => {
    await ob.request('GET', '/healthz');
    const r = await ob.request('GET', '/metrics');
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(r.text, /outbox_http_requests_total\{route="GET \/healthz",status="200"\} \d+/);
});
//# sourceMappingURL=health.test.js.map