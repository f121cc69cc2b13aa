import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { AckPolicy, jetstream, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ServerProcess } from '../../helpers/servers.js';
/**
 * Why nothing in Outbox relies on `term(reason)`: nats-server 2.9 (Debian 12's) does not recognise `+TERM <reason>`
 * and hands the message out again at every ack wait, for ever. A plain `term()` ends it on every server version;
 * Outbox acknowledges after recording the ending instead, and terminates without a reason where nothing is owed.
 */
const servers = [];
after(async () => { for (const s of servers)
    await s.dispose(); });
test('on this nats-server, term() ends a message; term(reason) is honoured only from 2.10 on', async () => {
    const nats = await ServerProcess.nats();
    servers.push(nats);
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    const version = nc.info.version;
    await jsm.streams.add({ name: 'T', subjects: ['t.>'], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add('T', { durable_name: 'c', ack_policy: AckPolicy.Explicit, ack_wait: 1_000_000_000 });
    const consumer = await jetstream(nc).consumers.get('T', 'c');
    const js = jetstream(nc);
    await js.publish('t.with-reason', 'a');
    await js.publish('t.plain', 'b');
    for (let i = 0; i < 2; i++) {
        const m = await consumer.next({ expires: 2000 });
        assert.ok(m !== null);
        if (m.subject === 't.with-reason')
            m.term('a reason');
        else
            m.term();
    }
    const again = await consumer.next({ expires: 3000 });
    const [major, minor] = version.split('.').map(Number);
    if (major === 2 && minor < 10) {
        assert.equal(again?.subject, 't.with-reason', `nats-server ${version} hands a message terminated with a reason out again`);
        assert.equal(again?.info.deliveryCount, 2);
    }
    else {
        assert.equal(again, null);
    }
    again?.term();
    assert.equal(await consumer.next({ expires: 2000 }), null, 'a plain term() ends it');
    assert.equal((await jsm.streams.info('T')).state.messages, 0);
    await nc.close();
});
//# sourceMappingURL=nats_term_reason.test.js.map