import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JustStored } from '../../../inbound/raw_store.js';
test('a message just stored is handed over once, then read from the store like any other', () => {
    const s = new JustStored();
    s.put('msg_a', Buffer.from('hello'));
    assert.deepEqual(s.take('msg_a'), Buffer.from('hello'));
    assert.equal(s.take('msg_a'), undefined);
    assert.equal(s.take('msg_never'), undefined);
});
test('it holds at most maxBytes: the oldest go first, and a message that cannot fit is not kept', () => {
    const s = new JustStored(10, 60_000);
    s.put('msg_a', Buffer.alloc(4));
    s.put('msg_b', Buffer.alloc(4));
    s.put('msg_c', Buffer.alloc(4));
    assert.equal(s.take('msg_a'), undefined, 'evicted to make room');
    assert.ok(s.take('msg_b') !== undefined);
    assert.ok(s.take('msg_c') !== undefined);
    s.put('msg_huge', Buffer.alloc(11));
    assert.equal(s.take('msg_huge'), undefined);
});
test('messages nobody took (their job went to another process) expire', async () => {
    const s = new JustStored(1024, 20);
    s.put('msg_a', Buffer.alloc(4));
    await new Promise((resolve) => setTimeout(resolve, 40));
    s.put('msg_b', Buffer.alloc(4));
    assert.equal(s.take('msg_a'), undefined);
    assert.ok(s.take('msg_b') !== undefined);
});
//# sourceMappingURL=just_stored.test.js.map