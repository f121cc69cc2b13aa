import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.js';
import { putWebhook } from '../../helpers/webhooks.js';
import { publishQueued, queuedMessage, startRelayScenario } from '../../helpers/engine_env.js';
import { suppressAddress } from '../../../stores/events/mod.js';
import { suppressionKey } from '../../../stores/control_plane/mod.js';
// The sink's recipient decides its permanent reply: permfail 550 5.1.1, policy 550 5.7.1, toobig 552 5.3.4,
// full 552 5.2.2. Only the mailbox (and domain) categories say the address cannot receive mail.
let sink;
let ob;
let org;
let events;
let rx;
let scenario;
before(async () => {
    rx = await HttpsReceiver.start();
    ({ sink, ob, org, events } = scenario = await startRelayScenario({
        env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true' }
    }));
    await putWebhook(ob, org, { url: rx.url('/bounces'), events: ['bounced'] });
});
after(async () => { await scenario.close(); await rx.close(); });
const CASES = [
    { rcpt: 'permfail@cat.example', code: '550', category: 'mailbox', suppressed: true },
    { rcpt: 'policy@cat.example', code: '550', category: 'policy', suppressed: false },
    { rcpt: 'toobig@cat.example', code: '552', category: 'size', suppressed: false },
    { rcpt: 'full@cat.example', code: '552', category: 'mailbox_full', suppressed: false }
];
test('a hard bounce carries its category in the event and the webhook; only a mailbox bounce suppresses', async () => {
    const msgs = CASES.map((c) => queuedMessage(org, { to: [c.rcpt] }));
    for (const m of msgs)
        await publishQueued(ob.proc.nc, ob.proc.config, m);
    await events.until(() => msgs.every((m) => events.of(m.id, 'bounced').length === 1));
    const hooks = await rx.waitFor(CASES.length, { path: '/bounces' });
    const hooked = new Map(hooks.map((r) => {
        const body = JSON.parse(r.rawBody.toString());
        return [String(body.data.to), body.data];
    }));
    for (const [i, c] of CASES.entries()) {
        const d = events.of(msgs[i].id, 'bounced')[0].data;
        assert.equal(d.bounce_type, 'hard', c.rcpt);
        assert.equal(d.bounce_code, c.code, c.rcpt);
        assert.equal(d.bounce_category, c.category, c.rcpt);
        assert.equal(hooked.get(c.rcpt)?.bounce_category, c.category, `webhook payload of ${c.rcpt}`);
        assert.equal(ob.proc.cp.isSuppressed(org.orgId, c.rcpt), c.suppressed, `suppression of ${c.rcpt}`);
    }
    assert.equal(ob.proc.cp.suppressions.get(suppressionKey(org.orgId, 'permfail@cat.example'))?.reason, 'hard_bounce');
    for (const c of CASES)
        assert.equal(sink.rcptLog.filter((l) => l.startsWith(`${c.rcpt} `)).length, 1, `${c.rcpt} tried once`);
});
test('a hard bounce to an address already suppressed keeps the first entry', async () => {
    const rcpt = 'permfail-unsubscribed@cat.example';
    // the recipient unsubscribed while the message was queued: the API no longer accepts mail to it, this one still goes
    await suppressAddress(ob.proc.cp, org.orgId, rcpt, 'unsubscribe', 'msg_00000000000000000000000001');
    const first = ob.proc.cp.suppressions.get(suppressionKey(org.orgId, rcpt));
    assert.equal(first?.reason, 'unsubscribe');
    const msg = queuedMessage(org, { to: [rcpt] });
    await publishQueued(ob.proc.nc, ob.proc.config, msg);
    await events.until(() => events.of(msg.id, 'bounced').length === 1);
    assert.equal(events.of(msg.id, 'bounced')[0].data.bounce_category, 'mailbox');
    // the suppression is written before the event is published
    assert.deepEqual(ob.proc.cp.suppressions.get(suppressionKey(org.orgId, rcpt)), first);
});
//# sourceMappingURL=bounce_categories.test.js.map