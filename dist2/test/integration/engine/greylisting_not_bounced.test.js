import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { publishQueued, queuedMessage, startRelayScenario } from '../../helpers/engine_env.js';
import { SUSPEND_AFTER } from '../../../engine/destination_backoff.js';
// Ordinary greylisting: the domain answers 451 to each new recipient's first two attempts and accepts the third.
// Eight new recipients at once make more than SUSPEND_AFTER 4xx in a row, so the domain is suspended: that may
// delay them, but must not spend their retries, and every one must be delivered.
const RECIPIENTS = 8;
const SCHEDULE_S = [2, 2, 8]; // the backoff follows it: suspended for 2 s at first, then up to 8 s
let sink;
let ob;
let org;
let events;
let scenario;
before(async () => {
    ({ sink, ob, org, events } = scenario = await startRelayScenario({
        sink: { tempfailTimes: 2 },
        env: { OB_DELIVERY_RETRY_SCHEDULE: SCHEDULE_S.join(',') }
    }));
});
after(async () => { await scenario.close(); });
test('a greylisting domain suspended by its 4xx gets every recipient delivered, none bounced', { timeout: 60_000 }, async () => {
    assert.ok(RECIPIENTS > SUSPEND_AFTER);
    const msgs = Array.from({ length: RECIPIENTS }, (_, i) => queuedMessage(org, { to: [`tempfail${i}@greylisting.example`] }));
    for (const m of msgs)
        await publishQueued(ob.proc.nc, ob.proc.config, m);
    await events.until(() => msgs.every((m) => events.of(m.id, 'delivered').length + events.of(m.id, 'bounced').length === 1), 40_000);
    const bounced = msgs.filter((m) => events.of(m.id, 'bounced').length > 0);
    assert.deepEqual(bounced.map((m) => m.to[0]), [], 'no recipient bounced');
    for (const [i, m] of msgs.entries()) {
        const rcpt = `tempfail${i}@greylisting.example`;
        assert.equal(sink.to(rcpt).length, 1, `${rcpt} delivered once`);
        assert.deepEqual(sink.rcptLog.filter((l) => l.startsWith(`${rcpt} `)).map((l) => l.split(' ')[1]), ['451', '451', '250']);
        // a deferred event is a real attempt: the two 451s, nothing for turns spent waiting out the suspension
        assert.deepEqual(events.of(m.id, 'deferred').map((e) => e.data.attempt), [1, 2], rcpt);
    }
});
//# sourceMappingURL=greylisting_not_bounced.test.js.map