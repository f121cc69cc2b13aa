import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useOwnRedis } from '../../helpers/own_redis.js';
import { DestinationThrottle, throttleKey } from '../../../engine/actor/throttle.js';
const own = useOwnRedis();
test('the GCRA lets a burst of one second through, then returns the wait; hosts are independent', async () => {
    const t = new DestinationThrottle(own.redis, 5);
    const first = await Promise.all(Array.from({ length: 5 }, async () => await t.check('mx.a.example')));
    assert.deepEqual(first, [0, 0, 0, 0, 0]);
    const wait = await t.check('mx.a.example');
    assert.ok(wait > 0 && wait <= 200, `wait ${wait} ms is at most one emission interval`);
    assert.equal(await t.check('mx.b.example'), 0);
    assert.ok(await own.redis.exists(throttleKey('mx.a.example', 5)) === 1, 'the key names host and rate');
    assert.equal(throttleKey('MX.A.example', 5), 'ob:thr:mx.a.example:5:1');
});
test('rate 0 means no shaping and no Redis call', async () => {
    const t = new DestinationThrottle(own.redis, 0);
    for (let i = 0; i < 20; i++)
        assert.equal(await t.check('mx.c.example'), 0);
    assert.equal(await own.redis.exists(throttleKey('mx.c.example', 0)), 0);
});
//# sourceMappingURL=throttle_gcra.test.js.map