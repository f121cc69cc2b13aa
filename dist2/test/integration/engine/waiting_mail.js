import assert from 'node:assert/strict';
import { SmtpSink } from '../../helpers/smtp_sink.js';
import { TestOutbox } from '../../helpers/outbox.js';
import { messageIdHeader, send, sendBody, sinkCounts, sleep, untilNothingPending, nothingPending } from '../faults/fault_env.js';
export async function runWaitingMail(t, plan) {
    const sink = await SmtpSink.start({ keepRaw: false, tempfailTimes: plan.retryScheduleS.length });
    const ob = await TestOutbox.start({
        env: { OB_SMTP_RELAY: sink.url, OB_DELIVERY_RETRY_SCHEDULE: plan.retryScheduleS.join(','), OB_ENGINE_SWEEP_MS: '1000' }
    });
    try {
        const org = await ob.org();
        const key = await ob.key(org, ['send', 'read']);
        const sent = [];
        let n = 0;
        const sendOne = async (kind, extra = {}, dueMs = Date.now()) => {
            const to = `${kind === 'deferred' ? 'tempfail' : kind}${n++}@dest.example`;
            const r = await send(ob.baseUrl, key, sendBody(org, to, extra));
            assert.equal(r.status, 202, r.error);
            sent.push({ id: r.id, to, kind, dueMs });
        };
        let waiting = true;
        const ordinary = (async () => {
            while (waiting) {
                await sendOne('ordinary');
                await sleep(plan.ordinaryEveryMs);
            }
        })();
        let sweeps = 0;
        const forced = (async () => {
            while (waiting) {
                await sleep(plan.forcedSweepEveryMs);
                await ob.proc.engine.sweep(sweeps++ % 2 === 1);
            }
        })();
        // waiting mail is sent among the ordinary mail, so its stream sequences sit between other shards' messages
        const started = Date.now();
        for (const s of plan.scheduledAheadS) {
            await sleep(300);
            const due = Date.now() + s * 1000;
            await sendOne('scheduled', { scheduled_at: new Date(due).toISOString() }, due);
        }
        for (let i = 0; i < plan.deferred; i++) {
            await sleep(300);
            await sendOne('deferred', {}, Date.now() + plan.retryScheduleS.reduce((a, b) => a + b, 0) * 1000);
        }
        const lastDue = Math.max(...sent.map((s) => s.dueMs));
        const missing = () => { const c = sinkCounts(sink); return sent.filter((s) => !c.has(messageIdHeader(org, s.id))); };
        // a waiting message the engine dropped never arrives: give each its due time and a minute more
        await sink.until(() => Date.now() > lastDue && missing().length === 0, lastDue - Date.now() + 60_000).catch(() => { });
        waiting = false;
        await Promise.all([ordinary, forced]);
        t.diagnostic(`${sent.length} sent over ${Math.round((Date.now() - started) / 1000)} s, ${sweeps} forced sweeps`);
        assert.deepEqual(missing().map((s) => `${s.kind} ${s.to}`), [], 'every message reached the sink');
        // the ordinary mail sent last, after lastDue, may still be on its way
        await sink.until(() => missing().length === 0, 30_000);
        const counts = sinkCounts(sink);
        for (const s of sent)
            assert.equal(counts.get(messageIdHeader(org, s.id)), 1, `${s.kind} ${s.to} delivered once`);
        for (const s of sent.filter((x) => x.kind === 'deferred')) {
            assert.deepEqual(sink.rcptLog.filter((l) => l.startsWith(`${s.to} `)), [...plan.retryScheduleS.map(() => `${s.to} 451`), `${s.to} 250`]);
        }
        for (const s of sent) {
            let m = {};
            for (let i = 0; i < 100 && m.status !== 'delivered'; i++) {
                m = (await ob.request('GET', `/v1/messages/${s.id}`, { key })).body ?? {};
                if (m.status !== 'delivered')
                    await sleep(100);
            }
            assert.equal(m.status, 'delivered', `${s.kind} ${s.to} ends delivered`);
            const delivered = (m.events ?? []).filter((e) => e.type === 'delivered');
            assert.equal(delivered.length, 1, `${s.kind} ${s.to}: one delivered event`);
            if (s.kind === 'scheduled')
                assert.ok(Date.parse(String(delivered[0].data.delivered_at)) >= s.dueMs - 250, `${s.to} not before its scheduled_at`);
        }
        const state = await untilNothingPending(ob.nats.url, 20_000);
        assert.ok(nothingPending(state), JSON.stringify(state));
    }
    finally {
        await ob.close();
        await sink.close();
    }
}
//# sourceMappingURL=waiting_mail.js.map