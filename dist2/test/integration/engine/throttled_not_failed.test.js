import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { publishQueued, queuedMessage, startRelayScenario } from '../../helpers/engine_env.js';
let sink;
let ob;
let org;
let events;
let scenario;
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_DELIVERY_HOST_RATE: '2' } })); });
after(async () => { await scenario.close(); });
test('sends over the destination rate wait and go out later, without a deferral', async () => {
    const msgs = Array.from({ length: 6 }, (_v, i) => queuedMessage(org, { to: [`t${i}@dest.example`] }));
    for (const m of msgs)
        await publishQueued(ob.proc.nc, ob.proc.config, m);
    await events.until(() => msgs.every((m) => events.of(m.id, 'delivered').length === 1), 20_000);
    assert.equal(events.events.filter((e) => e.type !== 'delivered').length, 0);
    const times = msgs.map((m) => Date.parse(String(events.of(m.id, 'delivered')[0].data.delivered_at))).sort((a, b) => a - b);
    assert.ok(times[5] - times[0] >= 1000, 'six sends at 2/s (burst 2) spread over more than a second');
    assert.equal(sink.messages.length, 6);
});
//# sourceMappingURL=throttled_not_failed.test.js.map