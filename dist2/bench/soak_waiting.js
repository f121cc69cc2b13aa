import { send, sendBody, sinkCounts, sleep } from '../test/integration/faults/fault_env.js';
import { collectEvents } from './soak_checks.js';
/** A scheduled_at less than this far ahead would read as "send now" (60 s of clock skew, plus a margin). */
const MIN_AHEAD_S = 65;
export function startWaitingMail(w, plan, accepted) {
    const org = { orgId: w.orgId, domainId: '', domain: w.domain, adminKey: w.key };
    const sent = [];
    let running = true;
    const loop = (async () => {
        for (let i = 0; running; i++) {
            const deferred = i % 2 === 0;
            const ahead = Math.min(plan.aheadS[0] + Math.random() * (plan.aheadS[1] - plan.aheadS[0]), (plan.lastDueMs - Date.now()) / 1000);
            if (deferred || ahead >= MIN_AHEAD_S) {
                const due = deferred ? Date.now() : Date.now() + ahead * 1000;
                const body = deferred
                    ? sendBody(org, `tempfail${plan.deferTimes}times-w${i}@w${i}.deferred.example`)
                    : sendBody(org, `w${i}@scheduled.example`, { scheduled_at: new Date(due).toISOString() });
                // retried with one Idempotency-Key until answered, as the soak's other senders do
                for (let attempt = 0; running || attempt === 0; attempt++) {
                    const r = await send(w.baseUrl, w.key, body, { 'idempotency-key': `soak-waiting-${i}` });
                    if (r.status === 202) {
                        sent.push({ id: r.id, kind: deferred ? 'deferred' : 'scheduled', dueMs: due, acceptedMs: Date.now() });
                        accepted(r.id);
                        break;
                    }
                    await sleep(Math.min(1000, Number(r.retryAfter ?? 1) * 1000));
                }
            }
            await sleep(plan.everyMs);
        }
    })();
    return { sent, async stop() { running = false; await loop; } };
}
/** After the drain: each waiting message at the sink once, not before its scheduled_at, and `delivered`. */
export async function checkWaitingMail(w, sent, soakStart) {
    const counts = sinkCounts(w.sink);
    const at = (id) => counts.get(`<${id}@${w.domain}>`) ?? 0;
    const deliveredAt = new Map();
    for (const { record: e } of await collectEvents(w.nats.url, w.orgId)) {
        if (e.type === 'delivered' && e.message_id !== undefined)
            deliveredAt.set(e.message_id, Date.parse(String(e.data.delivered_at)));
    }
    let notDelivered = 0;
    const wrong = [];
    const sinceStart = (ms) => Math.round((ms - soakStart) / 1000);
    for (const s of sent) {
        const res = await fetch(`${w.baseUrl}/v1/messages/${s.id}`, { headers: { authorization: `Bearer ${w.key}` } }).catch(() => undefined);
        const m = res?.status === 200 ? await res.json() : undefined;
        if (m?.status !== 'delivered')
            notDelivered++;
        const early = s.kind === 'scheduled' && (deliveredAt.get(s.id) ?? Infinity) < s.dueMs - 250;
        if (m?.status !== 'delivered' || at(s.id) !== 1 || early) {
            wrong.push({ id: s.id, kind: s.kind, accepted_s: sinceStart(s.acceptedMs), due_s: sinceStart(s.dueMs), at_sink: at(s.id), status: m?.status ?? `HTTP ${res?.status ?? 'error'}` });
        }
    }
    return {
        deferred: sent.filter((s) => s.kind === 'deferred').length,
        scheduled: sent.filter((s) => s.kind === 'scheduled').length,
        lost: sent.filter((s) => at(s.id) === 0).length,
        duplicated: sent.filter((s) => at(s.id) > 1).length,
        early: sent.filter((s) => s.kind === 'scheduled' && (deliveredAt.get(s.id) ?? Infinity) < s.dueMs - 250).length,
        notDelivered,
        wrong
    };
}
//# sourceMappingURL=soak_waiting.js.map