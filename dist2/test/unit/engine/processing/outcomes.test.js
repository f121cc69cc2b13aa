import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyOutcomes, resumeAt, retryScheduleOf, softBounceCode, verdictOf } from '../../../../engine/processing/outcomes.js';
import { EventFactory } from '../../../../engine/events_out.js';
import { SANDBOX_RETRY_SCHEDULE_S } from '../../../../engine/sandbox.js';
const MSG = { id: 'msg_01', org_id: 'org_1', from: 's@example.com', environment: 'live' };
const AT = '2026-11-25T02:00:00.000Z';
const T = Date.parse(AT);
const SCHEDULE = [60, 300];
function context(over = {}) {
    return {
        events: new EventFactory(MSG, 'Hi'), attemptsBefore: () => 0, followUps: new Map(), schedule: SCHEDULE, giveUpAt: T + 360_000, now: T,
        ...over
    };
}
const result = (rcpt, outcome) => ({ rcpt, at: AT, outcome });
test('delivered: a final delivered event; a sandbox complaint follows it, is counted, and suppresses', () => {
    const complaint = { type: 'complained', at: AT, fields: { complained_at: AT, feedback_type: 'abuse' } };
    const accepted = { kind: 'delivered', response: '250 OK' };
    const followUps = new Map([['c@x.org', complaint]]);
    const fx = classifyOutcomes([result('a@x.org', accepted), result('c@x.org', accepted)], context({ followUps }));
    assert.deepEqual(fx.events.map((e) => `${e.type} ${String(e.data.to)}`), ['delivered a@x.org', 'delivered c@x.org', 'complained c@x.org']);
    assert.deepEqual(fx.finals, ['a@x.org', 'c@x.org']);
    assert.deepEqual(fx.suppress, [{ email: 'c@x.org', reason: 'complaint' }]);
    assert.deepEqual(fx.counts, [{ outcome: 'delivered', complaint: false }, { outcome: 'delivered', complaint: true }]);
    assert.deepEqual(JSON.parse(fx.changes.fields()['d:c@x.org']).map((e) => e.type), ['delivered', 'complained']);
    assert.equal(fx.waits.size, 0);
});
test('bounced: hard, with its category; only mailbox and domain suppress, and never a refusal of our own', () => {
    const fx = classifyOutcomes([
        result('gone@x.org', { kind: 'bounced', code: '550', message: '550 5.1.1 user unknown' }),
        result('spam@x.org', { kind: 'bounced', code: '554', message: '554 5.7.1 blocked as spam' }),
        result('lan@x.org', { kind: 'bounced', code: '550', message: '5.4.4 private', suppress: false })
    ], context());
    assert.deepEqual(fx.events.map((e) => [e.data.bounce_type, e.data.bounce_category, e.data.bounce_code]), [['hard', 'mailbox', '550'], ['hard', 'policy', '554'], ['hard', 'domain', '550']]);
    assert.deepEqual(fx.suppress, [{ email: 'gone@x.org', reason: 'hard_bounce' }]);
    const counted = fx.counts.map((c) => c.outcome === 'bounced' ? `${c.bounce}/${c.category}` : c.outcome);
    assert.deepEqual(counted, ['hard/mailbox', 'hard/policy', 'hard/domain']);
    assert.deepEqual(fx.finals, ['gone@x.org', 'spam@x.org', 'lan@x.org']);
});
test('failed: a final failed event with its category', () => {
    const fx = classifyOutcomes([result('a@x.org', { kind: 'failed', category: 'unbuildable', reason: 'bad address' })], context());
    assert.deepEqual(fx.events.map((e) => [e.type, e.data.failure_category, e.data.reason]), [['failed', 'unbuildable', 'bad address']]);
    assert.deepEqual(fx.counts, [{ outcome: 'failed' }]);
});
test('deferred within the span: an event for attempt n, its next attempt from the schedule, recorded as a wait', () => {
    const greylisted = result('a@x.org', { kind: 'deferred', response: '451 4.7.1 greylisted' });
    const fx = classifyOutcomes([greylisted], context({ attemptsBefore: () => 1 }));
    assert.equal(fx.events.length, 1);
    assert.equal(fx.events[0].type, 'deferred');
    assert.equal(fx.events[0].data.attempt, 2);
    assert.equal(fx.events[0].data.next_attempt_at, new Date(T + 300_000).toISOString());
    assert.deepEqual(fx.changes.fields(), { 'a:a@x.org': '2', 'n:a@x.org': String(T + 300_000) });
    assert.deepEqual([...fx.waits], [['a@x.org', T + 300_000]]);
    assert.deepEqual(fx.finals, []);
    assert.deepEqual(fx.counts, [{ outcome: 'deferred' }]);
});
test('deferred once the span has passed: a soft bounce with the reply\'s code, 421 without one', () => {
    const fx = classifyOutcomes([
        result('a@x.org', { kind: 'deferred', response: '452 4.2.2 mailbox full' }),
        result('b@x.org', { kind: 'deferred', response: 'ECONNREFUSED: connect refused' })
    ], context({ giveUpAt: T }));
    assert.deepEqual(fx.events.map((e) => [e.data.bounce_type, e.data.bounce_code, e.data.bounce_category]), [['soft', '452', 'mailbox_full'], ['soft', '421', 'other']]);
    assert.deepEqual(fx.finals, ['a@x.org', 'b@x.org']);
    assert.deepEqual(fx.suppress, [], 'a soft bounce never suppresses');
    assert.equal(softBounceCode('550 no'), '550');
    assert.equal(softBounceCode('timeout'), '421');
});
test('throttled: no event and no attempt used up, only a wait from now', () => {
    const fx = classifyOutcomes([result('a@x.org', { kind: 'throttled', retryAfterMs: 1500 })], context({ now: T + 10 }));
    assert.deepEqual(fx.events, []);
    assert.deepEqual(fx.counts, []);
    assert.deepEqual(fx.changes.fields(), { 'n:a@x.org': String(T + 1510) });
    assert.deepEqual([...fx.waits], [['a@x.org', T + 1510]]);
});
test('the message comes back at the earliest wait of those left, or not at all once all are final', () => {
    assert.equal(resumeAt(['a', 'b'], { finals: ['a', 'b'], waits: new Map() }, () => 0), undefined);
    const notBefore = (r) => r === 'c' ? T + 5 : T + 99;
    assert.equal(resumeAt(['a', 'b', 'c'], { finals: ['a'], waits: new Map([['b', T + 50]]) }, notBefore), T + 5);
    assert.equal(resumeAt(['a', 'b'], { finals: ['a'], waits: new Map([['b', T + 50]]) }, notBefore), T + 50);
});
test('only a deferral counts against a destination; delivered and bounced are answers', () => {
    assert.equal(verdictOf({ kind: 'deferred', response: '451' }), 'transient');
    assert.equal(verdictOf({ kind: 'delivered', response: '250' }), 'answered');
    assert.equal(verdictOf({ kind: 'bounced', code: '550', message: 'x' }), 'answered');
    assert.equal(verdictOf({ kind: 'failed', category: 'unbuildable', reason: 'x' }), 'unknown');
    assert.equal(verdictOf({ kind: 'throttled', retryAfterMs: 1 }), 'unknown');
});
test('a test message retries on the sandbox schedule', () => {
    assert.equal(retryScheduleOf({ environment: 'test' }, SCHEDULE), SANDBOX_RETRY_SCHEDULE_S);
    assert.equal(retryScheduleOf({ environment: 'live' }, SCHEDULE), SCHEDULE);
});
//# sourceMappingURL=outcomes.test.js.map