import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useOwnRedis } from '../../helpers/own_redis.js';
import { MessageStore } from '../../../stores/read_model/mod.js';
import { READ_MODEL_KEYS } from '../../../stores/read_model/message_store_keys.js';
import { MAX_RECIPIENTS, newId } from '../../../protocol/mod.js';
const own = useOwnRedis();
const ORG = 'org_0000000000recordbatch000';
function message(i) {
    return {
        v: 1,
        id: newId('msg'),
        org_id: ORG,
        domain_id: 'dom_test',
        key_id: 'key_test',
        environment: 'live',
        from: 'sender@example.com',
        to: Array.from({ length: MAX_RECIPIENTS }, (_, r) => `r${r}.m${i}@example.net`),
        cc: [],
        bcc: [],
        subject: `Message ${i}`,
        text: 'hi',
        headers: {},
        metadata: {},
        attachments: [],
        track_opens: true,
        track_clicks: true,
        suppressed: [],
        created_at: new Date().toISOString()
    };
}
test('a batch of messages recorded together indexes every recipient of every message, however many they are', async () => {
    const store = new MessageStore(own.redis);
    const msgs = Array.from({ length: 100 }, (_, i) => message(i));
    // one turn of the event loop: one batched script for all of them, 5000 recipient index members
    await Promise.all(msgs.map(async (m) => { await store.recordQueued(m, 'queued'); }));
    assert.equal(await own.redis.zcard(READ_MODEL_KEYS.messagesByAddress(ORG, 'live')), msgs.length * MAX_RECIPIENTS);
    assert.ok(await own.redis.pttl(READ_MODEL_KEYS.messagesByAddress(ORG, 'live')) > 0);
    const page = await store.listMessages(ORG, { environment: 'live', to: 'r49.m99@', limit: 10 });
    assert.deepEqual(page.data.map((m) => m.id), [msgs[99].id]);
    const detail = await store.getMessage(ORG, msgs[0].id);
    assert.equal(detail.status, 'queued');
    assert.equal(detail.recipient_count, MAX_RECIPIENTS);
});
//# sourceMappingURL=record_batch.test.js.map