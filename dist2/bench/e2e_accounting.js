import { percentile } from './soak_probe.js';
/** Message-ID the engine gives a message: `<id@sending-domain>`. */
export const messageIdOf = (id, domain) => `<${id}@${domain}>`;
export function keepBooks(accepted, arrivals, webhooks, domain) {
    const suffix = `@${domain}>`;
    const atSink = new Map();
    for (const [messageId, receivedAt, sentAt] of arrivals) {
        if (!messageId.endsWith(suffix))
            continue;
        const seen = atSink.get(messageId);
        if (seen === undefined)
            atSink.set(messageId, { count: 1, first: receivedAt, sentAt });
        else {
            seen.count++;
            seen.first = Math.min(seen.first, receivedAt);
        }
    }
    const ours = new Set();
    const latencies = [];
    let lost = 0;
    let duplicated = 0;
    let extraCopies = 0;
    let webhookMissing = 0;
    let webhookDuplicated = 0;
    let lastArrivalAt = 0;
    let timedByHeader = 0;
    for (const a of accepted) {
        const mid = messageIdOf(a.id, domain);
        ours.add(mid);
        const s = atSink.get(mid);
        const hooks = webhooks.get(a.id) ?? 0;
        if (hooks > 1)
            webhookDuplicated++;
        if (s === undefined) {
            lost++;
            continue;
        }
        if (hooks === 0)
            webhookMissing++;
        if (s.count > 1) {
            duplicated++;
            extraCopies += s.count - 1;
        }
        if (Number.isFinite(s.sentAt))
            timedByHeader++;
        latencies.push(s.first - (Number.isFinite(s.sentAt) ? s.sentAt : a.sentAt));
        lastArrivalAt = Math.max(lastArrivalAt, s.first);
    }
    const unacknowledged = [...atSink.keys()].filter((m) => !ours.has(m)).length;
    return {
        accepted: accepted.length,
        lost,
        duplicated,
        extraCopies,
        unacknowledged,
        webhookMissing,
        webhookDuplicated,
        sendToSinkMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.reduce((m, v) => Math.max(m, v), 0) },
        timedByHeader,
        lastArrivalAt
    };
}
/**
 * What makes the run fail: mail lost or delivered twice, or a delivered message whose `delivered` webhook never
 * came (a lost event). A repeated webhook is reported, not failed: webhooks are promised at least once.
 */
export function bookFailures(b) {
    const out = [];
    if (b.lost > 0)
        out.push(`${b.lost} of ${b.accepted} accepted message(s) never reached the SMTP sink`);
    if (b.duplicated > 0)
        out.push(`${b.duplicated} accepted message(s) reached the SMTP sink more than once (${b.extraCopies} extra copies)`);
    if (b.webhookMissing > 0)
        out.push(`${b.webhookMissing} delivered message(s) without a signed \`delivered\` webhook`);
    return out;
}
//# sourceMappingURL=e2e_accounting.js.map