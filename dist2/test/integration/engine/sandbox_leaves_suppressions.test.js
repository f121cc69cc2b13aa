import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startRelayScenario } from '../../helpers/engine_env.js';
// The whole service (gateway and engine), relaying live mail to a sink that accepts every address.
let sink;
let ob;
let org;
let events;
let liveKey;
let testKey;
let scenario;
before(async () => {
    ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_ROLE: 'all' } }));
    liveKey = await ob.key(org, ['send'], 'live');
    testKey = await ob.key(org, ['send'], 'test');
});
after(async () => { await scenario.close(); });
async function send(key, to) {
    return await ob.request('POST', '/v1/messages/send', { key, body: { from: `App <hello@${org.domain}>`, to, subject: 'Hi', text: 'Hi' } });
}
test('a sandbox bounce or complaint suppresses nothing: live mail to the address goes out, the sandbox accepts it again', async () => {
    const bounce = await send(testKey, 'bounce@dest.example');
    assert.equal(bounce.status, 202, bounce.text);
    const complaint = await send(testKey, 'complaint@dest.example');
    assert.equal(complaint.status, 202, complaint.text);
    // a suppression would be stored before the event is published, so these read the final list state
    await events.until(() => events.of(bounce.body.id, 'bounced').length === 1 && events.of(complaint.body.id, 'complained').length === 1);
    assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'bounce@dest.example'), false);
    assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'complaint@dest.example'), false);
    const list = await ob.request('GET', '/v1/suppressions', { key: org.adminKey });
    assert.deepEqual(list.body.data, []);
    const live = await send(liveKey, ['bounce@dest.example', 'complaint@dest.example']);
    assert.equal(live.status, 202, live.text);
    assert.equal(live.body.suppressed, undefined);
    await events.until(() => events.of(live.body.id, 'delivered').length === 2);
    assert.equal(sink.to('bounce@dest.example').length, 1);
    assert.equal(sink.to('complaint@dest.example').length, 1);
    const again = await send(testKey, 'bounce@dest.example');
    assert.equal(again.status, 202, again.text);
    await events.until(() => events.of(again.body.id, 'bounced').length === 1);
    assert.equal(events.of(again.body.id, 'bounced')[0].data.bounce_type, 'hard');
});
test('a live suppression neither blocks nor drops a sandbox recipient; live sends still honour it', async () => {
    const added = await ob.request('POST', '/v1/suppressions', { key: org.adminKey, body: { email: 'gone@dest.example' } });
    assert.equal(added.status, 201, added.text);
    const live = await send(liveKey, 'gone@dest.example');
    assert.equal(live.status, 422, live.text);
    assert.equal(live.body.error.code, 'recipient_suppressed');
    const sandbox = await send(testKey, 'gone@dest.example');
    assert.equal(sandbox.status, 202, sandbox.text);
    assert.equal(sandbox.body.suppressed, undefined);
    const mixed = await send(testKey, ['gone@dest.example', 'other@dest.example']);
    assert.equal(mixed.status, 202, mixed.text);
    assert.equal(mixed.body.suppressed, undefined);
    await events.until(() => events.of(sandbox.body.id, 'delivered').length === 1 && events.of(mixed.body.id, 'delivered').length === 2);
    assert.equal(sink.to('gone@dest.example').length, 0, 'the sandbox sends nothing');
});
//# sourceMappingURL=sandbox_leaves_suppressions.test.js.map