// test-group: long-wait — an SMTP server that takes 3.5 s to answer DATA, then a wait for a redelivery that must not come
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { publishQueued, queuedMessage, startRelayScenario } from '../../helpers/engine_env.js';
let sink;
let ob;
let org;
let events;
let scenario;
// ack_wait of 1 s against a 3.5 s DATA reply: only working() keeps JetStream from redelivering mid-transaction
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario({ sink: { slowMs: 3500 }, env: { OB_ENGINE_ACK_WAIT_MS: '1000' } })); });
after(async () => { await scenario.close(); });
test('a server slower than ack_wait still gets the message exactly once', async () => {
    const msg = queuedMessage(org, { to: ['slow@dest.example'] });
    await publishQueued(ob.proc.nc, ob.proc.config, msg);
    await events.until(() => events.of(msg.id, 'delivered').length === 1);
    await new Promise((resolve) => setTimeout(resolve, 2500)); // a redelivery would have started by now
    assert.equal(sink.rcptLog.length, 1);
    assert.equal(sink.to('slow@dest.example').length, 1);
    assert.equal(events.of(msg.id).length, 1);
});
//# sourceMappingURL=slow_server_single_delivery.test.js.map