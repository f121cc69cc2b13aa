// test-group: long-wait — a send scheduled 25 s ahead
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readMessage } from '../../helpers/read_after_write.js';
import { startRelayScenario } from '../../helpers/engine_env.js';
let sink;
let ob;
let org;
let events;
let key;
let scenario;
before(async () => {
    ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_ROLE: 'all' } }));
    key = await ob.key(org, ['send', 'read']);
});
after(async () => { await scenario.close(); });
const body = (to, scheduledAt) => ({ from: `App <hello@${org.domain}>`, to, subject: 'Soon', text: 'Soon', scheduled_at: scheduledAt.toISOString() });
async function readStatus(id) {
    const r = await readMessage(ob, id, key);
    assert.equal(r.status, 200, r.text);
    return r.body.status;
}
test('a send scheduled 25 s ahead reads scheduled and arrives no earlier than its time', async () => {
    const at = new Date(Date.now() + 25_000);
    const r = await ob.request('POST', '/v1/messages/send', { key, body: body('soon@dest.example', at) });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.status, 'scheduled');
    assert.equal(await readStatus(r.body.id), 'scheduled');
    await events.until(() => events.of(r.body.id, 'delivered').length === 1, 60_000);
    const [m] = sink.to('soon@dest.example');
    assert.ok(m.receivedAt >= at.getTime(), `arrived ${at.getTime() - m.receivedAt} ms before its time`);
    assert.ok(Date.parse(String(events.of(r.body.id, 'delivered')[0].data.delivered_at)) >= at.getTime());
    assert.deepEqual(events.of(r.body.id).map((e) => e.type), ['delivered']);
});
test('a scheduled_at up to 60 s in the past means now; further back is 400', async () => {
    const r = await ob.request('POST', '/v1/messages/send', { key, body: body('now@dest.example', new Date(Date.now() - 30_000)) });
    assert.equal(r.status, 202, r.text);
    assert.equal(r.body.status, 'queued');
    await events.until(() => events.of(r.body.id, 'delivered').length === 1);
    const old = await ob.request('POST', '/v1/messages/send', { key, body: body('late@dest.example', new Date(Date.now() - 90_000)) });
    assert.equal(old.status, 400, old.text);
    assert.equal(old.body.error.errors[0].field, 'scheduled_at');
});
//# sourceMappingURL=scheduled_within_a_minute.test.js.map