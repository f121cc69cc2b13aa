import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { MessageStore } from '../../../stores/read_model/mod.js';
import { READ_MODEL_KEYS as K } from '../../../stores/read_model/message_store_keys.js';
import { TestOutbox } from '../../helpers/outbox.js';
import { queue, event } from './fixtures.js';
/**
 * Events applied in one turn of the event loop go to Redis together; each keeps its own outcome: an event Redis
 * refuses (here its message's event index holds a string) fails alone, the others of its turn are applied, once.
 */
let ob;
let org;
before(async () => {
    ob = await TestOutbox.start({ env: { OB_ROLE: 'gateway' } });
    org = await ob.org();
});
after(async () => { await ob.close(); });
test('an event Redis refuses fails alone; the others applied in the same turn are stored and counted once', async () => {
    const store = new MessageStore(ob.proc.redis);
    const msgs = await Promise.all([0, 1, 2].map(async () => await queue(ob, org)));
    await ob.proc.redis.set(K.messageEvents(org.orgId, msgs[1].id), 'not a sorted set');
    const events = msgs.map((m) => event(org, m.id, 'delivered'));
    const outcomes = await Promise.allSettled(events.map(async (e) => await store.applyEvent(e)));
    assert.deepEqual(outcomes.map((o) => o.status), ['fulfilled', 'rejected', 'fulfilled']);
    assert.match(String(outcomes[1].reason), /WRONGTYPE/);
    for (const i of [0, 2]) {
        assert.equal(outcomes[i].value, true);
        const detail = await store.getMessage(org.orgId, msgs[i].id);
        assert.equal(detail.status, 'delivered');
        assert.deepEqual(detail.events.map((e) => e.type), ['delivered']);
    }
    // applied again (a redelivery): nothing changes
    assert.deepEqual(await Promise.all([events[0], events[2]].map(async (e) => await store.applyEvent(e))), [false, false]);
    assert.equal((await store.getMessage(org.orgId, msgs[0].id)).delivered_count, 1);
});
//# sourceMappingURL=apply_batched.test.js.map