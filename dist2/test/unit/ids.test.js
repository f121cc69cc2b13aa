import { test } from 'node:test';
import assert from 'node:assert/strict';
import { newId, randomToken, shardOf, eventId, ID_PATTERN, bareAddress, addressDomain } from '../../protocol/mod.js';
test('ids carry their prefix and sort by creation time', () => {
    const a = newId('msg', 1_700_000_000_000);
    const b = newId('msg', 1_700_000_000_001);
    assert.match(a, new RegExp(ID_PATTERN));
    assert.ok(a.startsWith('msg_'));
    assert.ok(a < b);
});
test('random tokens are base62 of the asked length', () => {
    const t = randomToken(32);
    assert.match(t, /^[A-Za-z0-9]{32}$/);
    assert.notEqual(t, randomToken(32));
});
test('shards are stable and spread', () => {
    assert.equal(shardOf('msg_abc', 8), shardOf('msg_abc', 8));
    const counts = new Array(4).fill(0);
    for (let i = 0; i < 4000; i++)
        counts[shardOf(newId('msg'), 4)]++;
    for (const c of counts)
        assert.ok(c > 800 && c < 1200, `uneven shard counts ${counts}`);
});
test('event ids are deterministic per outcome', () => {
    assert.equal(eventId('msg_1', 'a@b.c', 'delivered', 1), eventId('msg_1', 'a@b.c', 'delivered', 1));
    assert.notEqual(eventId('msg_1', 'a@b.c', 'delivered', 1), eventId('msg_1', 'a@b.c', 'delivered', 2));
    assert.match(eventId('x'), /^evt_[0-9a-z]{26}$/);
});
test('addresses with display names reduce to the bare address', () => {
    assert.equal(bareAddress('Ann Example <Ann@Example.COM>'), 'ann@example.com');
    assert.equal(bareAddress('bob@example.com'), 'bob@example.com');
    assert.equal(addressDomain('"Team" <team@mail.example.org>'), 'mail.example.org');
});
//# sourceMappingURL=ids.test.js.map