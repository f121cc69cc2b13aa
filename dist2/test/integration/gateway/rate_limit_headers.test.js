import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
let ob;
before(async () => { ob = await TestOutbox.start(); });
after(async () => { await ob.close(); });
test('a free key gets its burst of 60, then 429 with one Retry-After value equal to error.retry_after', async () => {
    const org = await ob.org('free');
    const statuses = [];
    let limited;
    for (let i = 0; i < 70 && limited === undefined; i++) {
        const r = await ob.request('GET', '/v1/whoami', { key: org.adminKey });
        statuses.push(r.status);
        if (r.status === 429)
            limited = r;
    }
    assert.ok(limited !== undefined, 'no 429 within 70 requests');
    assert.ok(statuses.filter((s) => s === 200).length >= 60, 'the burst is the per-minute value');
    assert.equal(limited.body.error.code, 'rate_limited');
    assert.ok(Number.isInteger(limited.body.error.retry_after) && limited.body.error.retry_after >= 1);
    assert.equal(limited.headers.get('retry-after'), String(limited.body.error.retry_after));
    assert.equal(limited.headers.get('ratelimit-limit'), '60');
    assert.equal(limited.headers.get('ratelimit-remaining'), '0');
});
//# sourceMappingURL=rate_limit_headers.test.js.map