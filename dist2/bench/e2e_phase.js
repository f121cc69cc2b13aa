import { loadavg } from 'node:os';
import { processCpuUs } from './proc_cpu.js';
import { sendLoad } from './e2e_load.js';
import { keepBooks } from './e2e_accounting.js';
export const ROLES = ['outbox', 'nats', 'redis', 'sink', 'receiver', 'load_generator'];
/** How long the wait for deliveries and webhooks may see no progress before the missing ones count as lost. */
const STALL_MS = 30_000;
const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const perS = (n, fromMs, toMs) => toMs > fromMs ? Math.round(n / ((toMs - fromMs) / 1000)) : 0;
/** Waits until the sink holds `sinkTarget` messages and the receiver `hookTarget` webhooks, or nothing moves for STALL_MS. */
async function untilSettled(w, sinkTarget, hookTarget) {
    let last = '';
    let movedAt = Date.now();
    for (;;) {
        const [atSink, hooks] = await Promise.all([w.sink.accepted(), w.receiver.count()]);
        if (atSink >= sinkTarget && hooks.received >= hookTarget)
            return;
        const now = `${atSink}/${hooks.received}`;
        if (now !== last) {
            last = now;
            movedAt = Date.now();
        }
        if (Date.now() - movedAt > STALL_MS)
            return;
        await new Promise((resolve) => setTimeout(resolve, 100));
    }
}
export async function runPhase(w, label, plan, body, progress) {
    const [sink0, hooks0] = await Promise.all([w.sink.accepted(), w.receiver.count()]);
    const pids = w.pids();
    const cpu0 = ROLES.map((r) => processCpuUs(pids[r]));
    const la0 = loadAverage();
    const load = await sendLoad(w.baseUrl, w.key, body, plan, (sent) => { progress(0.8 * sent / plan.count); });
    progress(0.8);
    await untilSettled(w, sink0 + load.accepted.length, hooks0.received + load.accepted.length);
    const endedAt = Date.now();
    const cpuUs = Object.fromEntries(ROLES.map((r, i) => [r, Math.max(0, processCpuUs(pids[r]) - cpu0[i])]));
    const la1 = loadAverage();
    const arrivals = await w.sink.arrivals();
    const hooks = await w.receiver.count();
    const report = await w.receiver.report();
    const books = keepBooks(load.accepted, arrivals, report.perMessage, w.domain);
    const delivered = books.accepted - books.lost;
    const webhooks = hooks.received - hooks0.received;
    return {
        label,
        ...(plan.ratePerS !== undefined ? { offered: plan.ratePerS } : {}),
        load,
        books,
        deliveredPerS: perS(delivered, load.firstAcceptAt, books.lastArrivalAt),
        webhooksPerS: perS(webhooks, load.firstAcceptAt, hooks.lastAt),
        webhooks,
        cpuUs,
        windowS: Math.round((endedAt - load.startedAt) / 100) / 10,
        loadAverage: { start: la0, end: la1 }
    };
}
//# sourceMappingURL=e2e_phase.js.map