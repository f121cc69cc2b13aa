import { bounceCategory, suppresses } from '../../protocol/mod.js';
import { DeliveryStateChanges } from '../delivery_state_layout.js';
import { nextAttemptAt, spanPassed } from '../retry_schedule.js';
import { SANDBOX_RETRY_SCHEDULE_S } from '../sandbox.js';
/** The retry schedule of a message: the sandbox's single short step for test messages, else the configured one. */
export function retryScheduleOf(msg, configured) {
    return msg.environment === 'test' ? SANDBOX_RETRY_SCHEDULE_S : configured;
}
/** The code of a soft bounce: the deferral reply's own code, else 421 (no reply: the connection failed). */
export function softBounceCode(response) {
    return /^[45]\d\d/.exec(response)?.[0] ?? '421';
}
export function classifyOutcomes(results, ctx) {
    const out = { changes: new DeliveryStateChanges(), events: [], finals: [], suppress: [], waits: new Map(), counts: [] };
    const { events } = ctx;
    for (const { rcpt, at, outcome } of results) {
        const atMs = Date.parse(at);
        const attempt = ctx.attemptsBefore(rcpt) + 1;
        let final;
        switch (outcome.kind) {
            case 'delivered': {
                final = [events.make('delivered', rcpt, at, { delivered_at: at, smtp_response: outcome.response })];
                const f = ctx.followUps.get(rcpt);
                if (f !== undefined)
                    final.push(events.make(f.type, rcpt, f.at, f.fields));
                if (f?.type === 'complained')
                    out.suppress.push({ email: rcpt, reason: 'complaint' });
                out.counts.push({ outcome: 'delivered', complaint: f?.type === 'complained' });
                break;
            }
            case 'bounced': {
                const category = bounceCategory({ code: outcome.code, text: outcome.message });
                final = [events.make('bounced', rcpt, at, {
                        bounce_type: 'hard', bounce_code: outcome.code, bounce_message: outcome.message, bounce_category: category, bounced_at: at
                    })];
                if (outcome.suppress !== false && suppresses(category))
                    out.suppress.push({ email: rcpt, reason: 'hard_bounce' });
                out.counts.push({ outcome: 'bounced', bounce: 'hard', category });
                break;
            }
            case 'failed':
                final = [events.make('failed', rcpt, at, { failed_at: at, failure_category: outcome.category, reason: outcome.reason })];
                out.counts.push({ outcome: 'failed' });
                break;
            case 'deferred':
                if (!spanPassed(atMs, ctx.giveUpAt)) {
                    const next = nextAttemptAt(atMs, attempt, ctx.schedule);
                    out.events.push(events.make('deferred', rcpt, at, {
                        deferred_at: at, smtp_response: outcome.response, attempt, next_attempt_at: new Date(next).toISOString()
                    }, attempt));
                    out.changes.deferred(rcpt, attempt, next);
                    out.waits.set(rcpt, next);
                    out.counts.push({ outcome: 'deferred' });
                }
                else {
                    const code = softBounceCode(outcome.response);
                    const category = bounceCategory({ code, text: outcome.response });
                    final = [events.make('bounced', rcpt, at, {
                            bounce_type: 'soft', bounce_code: code, bounce_message: outcome.response, bounce_category: category, bounced_at: at
                        })];
                    out.counts.push({ outcome: 'bounced', bounce: 'soft', category });
                }
                break;
            case 'throttled': {
                const until = ctx.now + outcome.retryAfterMs;
                out.changes.notBefore(rcpt, until);
                out.waits.set(rcpt, until);
                break;
            }
        }
        if (final !== undefined) {
            out.changes.final(rcpt, final);
            out.events.push(...final);
            out.finals.push(rcpt);
        }
    }
    return out;
}
/**
 * When the message comes back: undefined when every pending recipient now has its final outcome (the message is
 * done with), else the earliest time one that goes on waiting is due (this delivery's wait, else its recorded one).
 */
export function resumeAt(pending, effects, notBefore) {
    const done = new Set(effects.finals);
    const left = pending.filter((r) => !done.has(r));
    if (left.length === 0)
        return undefined;
    return Math.min(...left.map((r) => effects.waits.get(r) ?? notBefore(r)));
}
/** What an attempt's outcome says about its destination: only a 4xx or a failed connection counts against it. */
export function verdictOf(o) {
    if (o.kind === 'deferred')
        return 'transient';
    if (o.kind === 'delivered' || o.kind === 'bounced')
        return 'answered';
    return 'unknown';
}
//# sourceMappingURL=outcomes.js.map