import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { TestOutbox } from '../../helpers/outbox.js';
/**
 * Behind a trusted proxy (OB_TRUSTED_PROXIES holds the test's own address), failed authentications are counted
 * per client address as X-Forwarded-For names it, and per presented key prefix: one client guessing, or many
 * clients aiming at one prefix, are cut off without refusing anyone else.
 */
let ob;
let org;
before(async () => {
    ob = await TestOutbox.start({ env: { OB_TRUSTED_PROXIES: '127.0.0.0/8, ::1' } });
    org = await ob.org();
});
after(async () => { await ob.close(); });
function keyWithPrefix(four) {
    return `ob_live_${four}${randomBytes(20).toString('hex')}`;
}
function randomKey() {
    return `ob_live_${randomBytes(24).toString('hex')}`;
}
async function whoami(key, forwardedFor) {
    return await ob.request('GET', '/v1/whoami', { key, headers: { 'x-forwarded-for': forwardedFor } });
}
/**
 * The limit is a continuous bucket of 30 a minute (one back every 2 s), so on a slow machine a few more than 30
 * failures can be answered before the first 429.
 */
function allowedBefore(started) {
    return 30 + Math.ceil((Date.now() - started) / 2000);
}
test('failures from one forwarded client address are limited; other clients behind the proxy are not', async () => {
    let limited;
    let unauthorized = 0;
    const started = Date.now();
    for (let i = 0; i < 60 && limited === undefined; i++) {
        const r = await whoami(randomKey(), '203.0.113.7');
        if (r.status === 401)
            unauthorized++;
        else if (r.status === 429)
            limited = r;
        else
            assert.fail(`unexpected ${r.status}`);
    }
    assert.ok(limited !== undefined, 'guessing from 203.0.113.7 was cut off');
    assert.ok(unauthorized <= allowedBefore(started), `${unauthorized} guesses answered before the limit`);
    assert.match(limited.body.error.message, /from this address/);
    // Another client behind the same proxy fails normally (401), and its valid key works.
    assert.equal((await whoami(randomKey(), '203.0.113.8')).status, 401);
    assert.equal((await whoami(org.adminKey, '203.0.113.8')).status, 200);
    // What a client writes to the left of the proxy's own entry is not read: it cannot move to a fresh address.
    assert.equal((await whoami(randomKey(), '198.51.100.1, 203.0.113.7')).status, 429);
    // A trusted hop in the chain is skipped: the client is the first untrusted address from the right.
    assert.equal((await whoami(randomKey(), '203.0.113.7, 127.0.0.5')).status, 429);
    // The blocked client's own valid key is still served.
    assert.equal((await whoami(org.adminKey, '203.0.113.7')).status, 200);
});
test('failures presenting one key prefix are limited across client addresses; other prefixes are not', async () => {
    let limited;
    let unauthorized = 0;
    const started = Date.now();
    for (let i = 0; i < 60 && limited === undefined; i++) {
        // A fresh address each time: only the prefix is shared, as with a botnet aiming at one known key.
        const r = await whoami(keyWithPrefix('pQ7z'), `198.51.100.${i + 10}`);
        if (r.status === 401)
            unauthorized++;
        else if (r.status === 429)
            limited = r;
        else
            assert.fail(`unexpected ${r.status}`);
    }
    assert.ok(limited !== undefined, 'guessing at one prefix was cut off');
    assert.ok(unauthorized <= allowedBefore(started), `${unauthorized} guesses answered before the limit`);
    assert.match(limited.body.error.message, /with this key prefix/);
    assert.ok(limited.body.error.retry_after >= 1);
    assert.equal((await whoami(keyWithPrefix('pQ7z'), '198.51.100.250')).status, 429);
    assert.equal((await whoami(keyWithPrefix('Zz11'), '198.51.100.250')).status, 401);
    assert.equal((await whoami(org.adminKey, '198.51.100.250')).status, 200);
});
//# sourceMappingURL=auth_throttle_proxies.test.js.map