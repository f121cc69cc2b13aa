import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { TestOutbox } from '../../helpers/outbox.js';
import { EventReader } from '../../helpers/events.js';
import { installationSecret, signToken, newId } from '../../../protocol/mod.js';
const TTL_S = 3600;
const RATE = 20;
let ob;
let org;
let events;
let secret;
before(async () => {
    ob = await TestOutbox.start({ env: { OB_TRACKING_TOKEN_TTL_S: String(TTL_S), OB_TRACKING_RATE_LIMIT: String(RATE) } });
    org = await ob.org();
    events = await EventReader.open(ob.proc.nc, org.orgId);
    secret = await installationSecret(ob.proc.cp.settings, ob.proc.config.secret);
});
after(async () => {
    events.close();
    await ob.close();
});
/** A token for a message created `ageS` seconds ago. */
function token(k, ageS, extra = {}) {
    const claims = { k, o: org.orgId, m: newId('msg', Date.now() - ageS * 1000), r: 'reader@remote.test', ...extra };
    return { token: signToken(secret, claims), claims };
}
/** Every request comes from 127.0.0.1, one bucket: the first test stays well under the rate, the second goes over it. */
async function get(path) {
    const res = await request(ob.baseUrl + path, { headers: { 'user-agent': 'Reader/1.0' } });
    await res.body.arrayBuffer();
    return { status: res.statusCode, headers: res.headers };
}
test('open and click tokens older than the configured lifetime are 404 and record nothing', async () => {
    const expiredOpen = token('o', TTL_S + 60);
    const expiredClick = token('c', TTL_S + 60, { u: 'https://shop.example.org/a' });
    const freshOpen = token('o', TTL_S - 60);
    assert.equal((await get(`/t/o/${expiredOpen.token}`)).status, 404);
    assert.equal((await get(`/t/c/${expiredClick.token}`)).status, 404);
    assert.equal((await get(`/t/o/${freshOpen.token}`)).status, 200);
    await events.waitFor('opened');
    await events.settle(600);
    const ids = events.events.map((e) => e.message_id);
    assert.ok(ids.includes(freshOpen.claims.m));
    assert.ok(!ids.includes(expiredOpen.claims.m) && !ids.includes(expiredClick.claims.m), 'no event for an expired token');
});
test('the tracking endpoints are metered per client address: 429 with Retry-After over the rate', async () => {
    const statuses = [];
    let retryAfter;
    for (let i = 0; i < RATE + 5; i++) {
        const r = await get(`/t/o/${token('o', 0).token}`);
        statuses.push(r.status);
        if (r.status === 429)
            retryAfter = r.headers['retry-after'];
    }
    assert.ok(statuses.includes(429), `statuses: ${statuses.join(',')}`);
    assert.ok(statuses.filter((s) => s === 200).length <= RATE);
    assert.ok(Number(retryAfter) >= 1);
    // A garbage token is metered as well: it cannot be used to probe without limit.
    assert.equal((await get('/t/c/garbage')).status, 429);
});
//# sourceMappingURL=token_lifetime_and_metering.test.js.map