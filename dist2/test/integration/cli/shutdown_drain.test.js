import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
test('while draining the gateway answers 503 service_unavailable with Retry-After; stop closes NATS and Redis', async () => {
    const ob = await TestOutbox.start();
    try {
        assert.equal((await ob.request('GET', '/healthz')).status, 200);
        ob.proc.gateway.server.draining = true;
        const r = await ob.request('GET', '/healthz');
        assert.equal(r.status, 503);
        assert.equal(r.body.error.code, 'service_unavailable');
        assert.equal(r.headers.get('retry-after'), '1');
        ob.proc.gateway.server.draining = false;
    }
    finally {
        await ob.close();
    }
    assert.equal(ob.proc.nc.isClosed(), true);
    assert.equal(ob.proc.redis.status, 'end');
});
test('stop waits for the request in flight: 503 to new ones meanwhile, NATS closed only afterwards', async () => {
    const ob = await TestOutbox.start();
    const server = ob.proc.gateway.server;
    // A keep-alive connection opened before the drain: new connections are refused from then on, open ones answered.
    assert.equal((await ob.request('GET', '/healthz')).status, 200);
    server.inFlight++; // a request still being handled
    let stopped = false;
    const stopping = ob.proc.stop().then(() => { stopped = true; });
    try {
        await new Promise((resolve) => setTimeout(resolve, 100));
        const r = await ob.request('GET', '/v1/whoami');
        assert.equal(r.status, 503);
        assert.equal(r.body.error.code, 'service_unavailable');
        assert.equal(r.headers.get('connection'), 'close');
        assert.equal(stopped, false);
        assert.equal(ob.proc.nc.isClosed(), false);
    }
    finally {
        server.inFlight--;
    }
    await stopping;
    assert.equal(ob.proc.nc.isClosed(), true);
    await ob.close();
});
//# sourceMappingURL=shutdown_drain.test.js.map