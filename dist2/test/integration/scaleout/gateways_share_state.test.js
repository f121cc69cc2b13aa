import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, fetch } from 'undici';
import { ServerProcess } from '../../helpers/servers.js';
import { TestOutbox } from '../../helpers/outbox.js';
import { GATEWAY_CHILD, spawnChild, stopChild } from '../../helpers/children.js';
/**
 * Two gateway processes behind one NATS and one Redis, as behind a load balancer: keys reach every gateway
 * through KV watches, per-key rate limits are one budget in Redis, and an Idempotency-Key replays across them.
 */
let nats;
let redis;
let admin;
let org;
let a;
let b;
const agent = new Agent({ keepAliveTimeout: 1000 });
before(async () => {
    nats = await ServerProcess.nats();
    redis = await ServerProcess.redis();
    // this process only writes the organisation to the control plane
    admin = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } });
    org = await admin.org('free');
    const env = { NATS_URL: nats.url, REDIS_URL: redis.url, OB_DOMAIN_VERIFICATION: 'off', OB_SMTP_INBOUND_PORT: '0', OB_SHUTDOWN_TIMEOUT_MS: '2000' };
    [a, b] = await Promise.all([spawnChild(GATEWAY_CHILD, env), spawnChild(GATEWAY_CHILD, env)]);
});
after(async () => {
    await Promise.all([stopChild(a), stopChild(b)]);
    await agent.close().catch(() => { });
    await admin.close();
    await nats.dispose();
    await redis.dispose();
});
async function call(g, method, path, key, body) {
    const res = await fetch(`http://127.0.0.1:${g.port}${path}`, {
        method,
        dispatcher: agent,
        headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}
test('a key created through gateway A works at gateway B within a moment', async () => {
    const created = await call(a, 'POST', '/v1/api-keys', org.adminKey, { name: 'made at A', domain_id: org.domainId, permissions: ['read'] });
    assert.equal(created.status, 201);
    const deadline = Date.now() + 5000;
    let seen = await call(b, 'GET', '/v1/whoami', created.body.key);
    while (seen.status === 401 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        seen = await call(b, 'GET', '/v1/whoami', created.body.key);
    }
    assert.equal(seen.status, 200, 'the key authenticates at B');
});
test('the free plan allows 60 requests per minute across both gateways together', async () => {
    const key = await admin.key(org, ['read']);
    const statuses = { a: [], b: [] };
    const started = Date.now();
    for (let i = 0; i < 80; i++) {
        const g = i % 2 === 0 ? 'a' : 'b';
        statuses[g].push((await call(g === 'a' ? a : b, 'GET', '/v1/whoami', key)).status);
    }
    const all = [...statuses.a, ...statuses.b];
    const allowed = all.filter((s) => s === 200).length;
    // the burst is 60; one more token refills each second the loop runs
    const refills = Math.ceil((Date.now() - started) / 1000);
    assert.ok(allowed >= 60 && allowed <= 60 + refills, `allowed ${allowed} of 80 in ${refills} s`);
    assert.equal(all.filter((s) => s !== 200 && s !== 429).length, 0);
    assert.ok(statuses.a.includes(429) && statuses.b.includes(429), 'both gateways refuse once the shared budget is spent');
});
test('an Idempotency-Key used at gateway A replays at gateway B without a second message', async () => {
    const key = await admin.key(org, ['send']);
    const body = { from: `shop@${org.domain}`, to: 'buyer@example.net', subject: 'Receipt', html: '<p>Thanks</p>' };
    const send = async (g) => {
        const res = await fetch(`http://127.0.0.1:${g.port}/v1/messages/send`, {
            method: 'POST',
            dispatcher: agent,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': 'order-7-receipt' },
            body: JSON.stringify(body)
        });
        return { status: res.status, replayed: res.headers.get('idempotent-replayed'), body: await res.json() };
    };
    const first = await send(a);
    assert.equal(first.status, 202);
    const again = await send(b);
    assert.equal(again.status, 202);
    assert.equal(again.replayed, 'true');
    assert.deepEqual(again.body, first.body);
});
//# sourceMappingURL=gateways_share_state.test.js.map