import { addressDomain, bareAddress } from '../../protocol/mod.js';
import { freshRecipientState } from '../delivery_state_layout.js';
import { DUE_EARLY_MS } from '../retry_schedule.js';
import { nak } from './fate.js';
/** Every distinct bare address the message goes to (To, Cc and Bcc), in that order. */
export function recipientsOf(msg) {
    return [...new Set([...msg.to, ...msg.cc, ...msg.bcc].map(bareAddress))];
}
/** What the schedule state's verdict (its atomic take of a scheduled message) means for this copy. */
export function scheduleStepOf(verdict, now) {
    switch (verdict.kind) {
        case 'taken': return { go: true, dueAt: verdict.dueAt };
        // another copy (published by a reschedule to an earlier time) carries the message on
        case 'duplicate': return { go: false, fate: { kind: 'drop' } };
        case 'wait': return { go: false, fate: nak(verdict.at - now), waiting: true };
        case 'canceled': return { go: false, fate: { kind: 'ack' }, canceled: true };
    }
}
export function recipientAction(state, now) {
    if (state.final !== undefined)
        return state.published ? { kind: 'done' } : { kind: 'republish', events: state.final };
    if (state.sent !== undefined)
        return { kind: 'recover', result: state.sent };
    return state.notBefore <= now + DUE_EARLY_MS ? { kind: 'attempt' } : { kind: 'wait', until: state.notBefore };
}
export function planRecipients(recipients, states, now) {
    const plan = {
        republish: [],
        pending: [],
        recovered: [],
        unanswered: [],
        due: [],
        state: (rcpt) => states.get(rcpt) ?? freshRecipientState()
    };
    for (const rcpt of recipients) {
        const action = recipientAction(plan.state(rcpt), now);
        if (action.kind === 'republish')
            plan.republish.push(rcpt);
        if (action.kind === 'done' || action.kind === 'republish')
            continue;
        plan.pending.push(rcpt);
        if (action.kind === 'recover')
            plan.recovered.push(action.result);
        else
            plan.unanswered.push(rcpt);
        if (action.kind === 'attempt')
            plan.due.push(rcpt);
    }
    return plan;
}
export function messageStep(plan) {
    if (plan.pending.length === 0)
        return { kind: 'done' };
    if (plan.due.length === 0 && plan.recovered.length === 0) {
        return { kind: 'wait', until: Math.min(...plan.pending.map((r) => plan.state(r).notBefore)) };
    }
    return { kind: 'work' };
}
export function attemptRoute(msg, domain, plan) {
    if (domain === undefined) {
        return { kind: 'fail', failure: { category: 'domain_removed', reason: `the sending domain ${msg.domain_id} no longer exists` } };
    }
    if (plan.due.length === 0)
        return { kind: 'none' };
    return msg.environment === 'test' ? { kind: 'sandbox' } : { kind: 'smtp', domain };
}
/** `failed` results for recipients that can never be sent. */
export function failedResults(recipients, failure, at) {
    return recipients.map((rcpt) => ({ rcpt, at, outcome: { kind: 'failed', category: failure.category, reason: failure.reason } }));
}
/**
 * The results of a message that can never be sent (its stored content is gone or does not match): a recorded
 * reply stands, every other pending recipient fails.
 */
export function unsendableResults(plan, failure, at) {
    return plan.pending.map((rcpt) => plan.state(rcpt).sent ?? failedResults([rcpt], failure, at)[0]);
}
/**
 * The result of a due recipient its destination's backoff did not admit (destination_backoff.ts). It waits like a
 * throttled one (no event, no attempt used up) while its destination is busy or suspended, since no answer can
 * change before then; once the message's span has passed (`overdue`), a suspended destination's last 4xx defers
 * it, which gives up.
 */
export function unadmittedResult(rcpt, admission, overdue, at) {
    if (admission.kind === 'busy')
        return { rcpt, at, outcome: { kind: 'throttled', retryAfterMs: admission.retryAfterMs } };
    if (overdue) {
        const response = `${admission.lastResponse} (not attempted: ${addressDomain(rcpt)} answered only 4xx lately)`;
        return { rcpt, at, outcome: { kind: 'deferred', response } };
    }
    return { rcpt, at, outcome: { kind: 'throttled', retryAfterMs: Math.max(0, admission.probeAt - Date.parse(at)) } };
}
//# sourceMappingURL=delivery_plan.js.map