import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { TestOutbox } from '../../helpers/outbox.js';
import { freePort } from '../../helpers/ports.js';
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.js';
let ob;
let org;
let events;
before(async () => {
    const nothing = await freePort(); // nothing listens here
    ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: `smtp://127.0.0.1:${nothing}`, OB_ROLE: 'engine', OB_DELIVERY_RETRY_SCHEDULE: '1,1' } });
    org = await ob.org();
    events = await EventWatcher.start(ob.proc.nc, org.orgId);
});
after(async () => {
    events.stop();
    await ob.close();
});
test('connection refused is deferred and retried; when the schedule is spent it is a soft bounce', async () => {
    // The schedule's span (2 s) counts from acceptance: a first message settles the engine's start-up first.
    const warm = queuedMessage(org, { to: ['warm-up@dest.example'] });
    await publishQueued(ob.proc.nc, ob.proc.config, warm);
    await events.until(() => events.of(warm.id, 'bounced').length === 1);
    const msg = queuedMessage(org, { to: ['someone@dest.example'] });
    await publishQueued(ob.proc.nc, ob.proc.config, msg);
    await events.until(() => events.of(msg.id, 'bounced').length === 1);
    const deferred = events.of(msg.id, 'deferred');
    assert.deepEqual(deferred.map((e) => e.data.attempt), [1, 2]);
    assert.match(String(deferred[0].data.smtp_response), /ECONNREFUSED|ECONNECTION|ESOCKET/);
    const b = events.of(msg.id, 'bounced')[0].data;
    assert.equal(b.bounce_type, 'soft');
    assert.equal(b.bounce_code, '421');
    assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'someone@dest.example'), false, 'soft bounces do not suppress');
});
//# sourceMappingURL=connection_refused_deferred.test.js.map