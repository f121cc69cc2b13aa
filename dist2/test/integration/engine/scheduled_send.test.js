import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { publishQueued, queuedMessage, startRelayScenario } from '../../helpers/engine_env.js';
let sink;
let ob;
let org;
let events;
let scenario;
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario()); });
after(async () => { await scenario.close(); });
test('a scheduled message waits until scheduled_at, then goes out once with no deferral', async () => {
    const at = new Date(Date.now() + 3000);
    const msg = queuedMessage(org, { to: ['later@dest.example'], scheduled_at: at.toISOString() });
    const now = queuedMessage(org, { to: ['now@dest.example'] });
    await publishQueued(ob.proc.nc, ob.proc.config, msg);
    await publishQueued(ob.proc.nc, ob.proc.config, now);
    await events.until(() => events.of(now.id, 'delivered').length === 1);
    assert.equal(sink.to('later@dest.example').length, 0, 'not before its time');
    await events.until(() => events.of(msg.id, 'delivered').length === 1);
    assert.ok(Date.parse(String(events.of(msg.id, 'delivered')[0].data.delivered_at)) >= at.getTime() - 250);
    assert.deepEqual(events.of(msg.id).map((e) => e.type), ['delivered']);
    assert.equal(sink.to('later@dest.example').length, 1);
});
//# sourceMappingURL=scheduled_send.test.js.map