import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { acceptedIds, startSendLoad, sinkCounts, sleep, untilDelivered, startRelayWorld } from './fault_env.js';
/**
 * A NATS server killed (SIGKILL) and restarted on its store can forget, for messages it handed out just before,
 * that it did (their delivery count starts again at 1) and that they were acknowledged (a delivered message is
 * stored again). The engine is not stopped, so no SMTP transaction of it is cut short: each message it hands out
 * again is looked up in its delivery state first and none reaches the SMTP server twice.
 */
const RESTARTS = 5;
let nats;
let sink;
let ob;
let org;
let key;
let world;
before(async () => { ({ nats, sink, ob, org, key } = world = await startRelayWorld({ OB_PUBLISH_TIMEOUT_MS: '1000', OB_ENGINE_ACK_WAIT_MS: '2000' })); });
after(async () => { await world.close(); });
test('NATS SIGKILLed and restarted during sends, the engine running through: no message reaches the SMTP server twice', { timeout: 240_000 }, async (t) => {
    const load = startSendLoad(ob.baseUrl, key, org, 'nr', 12);
    for (let i = 0; i < RESTARTS; i++) {
        await sleep(2000);
        await nats.stop('SIGKILL');
        await sleep(1000);
        await nats.start();
    }
    await sleep(3000);
    await load.stop();
    const ids = acceptedIds(load.results);
    assert.ok(ids.length > 0);
    await untilDelivered(sink, org, ids, 90_000);
    await sleep(3000); // a message handed out again after the last delivery would show here
    const counts = sinkCounts(sink);
    const duplicated = [...counts].filter(([, n]) => n > 1).length;
    t.diagnostic(`accepted ${ids.length}, SMTP transactions ${sink.messages.length}, duplicated ${duplicated}`);
    assert.equal(duplicated, 0, 'no message sent twice');
});
//# sourceMappingURL=nats_restart_no_resend.test.js.map