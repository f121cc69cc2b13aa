import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { jetstreamManager } from '@nats-io/jetstream';
import { ServerProcess } from '../../helpers/servers.js';
import { TestOutbox } from '../../helpers/outbox.js';
import { SmtpSink } from '../../helpers/smtp_sink.js';
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.js';
import { STREAM_OUTBOUND } from '../../../protocol/mod.js';
let nats;
let redis;
let sink;
before(async () => {
    nats = await ServerProcess.nats();
    redis = await ServerProcess.redis();
    sink = await SmtpSink.start({ slowMs: 4000 });
});
after(async () => {
    await sink.close();
    await nats.dispose();
    await redis.dispose();
});
test('drain lets fast sends finish, hands back what misses the deadline, and the next engine delivers it', async () => {
    const env = { OB_SMTP_RELAY: sink.url, OB_ROLE: 'engine', OB_SHUTDOWN_TIMEOUT_MS: '1000' };
    const first = await TestOutbox.start({ nats, redis, env });
    const org = await first.org();
    const events = await EventWatcher.start(first.proc.nc, org.orgId);
    const fast = queuedMessage(org, { to: ['fast@dest.example'] });
    const slow = queuedMessage(org, { to: ['slow@dest.example'] });
    await publishQueued(first.proc.nc, first.proc.config, fast);
    await events.until(() => events.of(fast.id, 'delivered').length === 1);
    await publishQueued(first.proc.nc, first.proc.config, slow);
    await sink.until(() => sink.rcptLog.includes('slow@dest.example 250'));
    const t0 = Date.now();
    await first.proc.engine.drain(1000); // the slow DATA reply takes 4 s: it cannot finish in time
    assert.ok(Date.now() - t0 < 3000, 'drain respects its deadline');
    events.stop();
    await first.proc.stop();
    const jsmNc = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } });
    const jsm = await jetstreamManager(jsmNc.proc.nc);
    const info = await jsm.streams.info(STREAM_OUTBOUND);
    assert.equal(info.state.messages, 1, 'the unfinished message is still in the work queue');
    await jsmNc.close();
    const second = await TestOutbox.start({ nats, redis, env });
    const events2 = await EventWatcher.start(second.proc.nc, org.orgId);
    await events2.until(() => events2.of(slow.id, 'delivered').length === 1, 20_000);
    assert.ok(sink.to('slow@dest.example').length >= 1);
    events2.stop();
    await second.close();
});
//# sourceMappingURL=drain_hands_back.test.js.map