import { bareAddress } from '../../protocol/mod.js';
/** The distinct recipients of a message (to, cc then bcc), bare and lower-cased, as events name them. */
export function recipientAddresses(m) {
    return [...new Set([...m.to, ...m.cc, ...m.bcc].map(bareAddress))];
}
/**
 * Reads the per-recipient fields (`r:<address>` = `<status> <rank> <attempts> <last event ms>`, written by
 * apply_event.lua) of a message hash. A recipient with no outcome yet has the message's own status while that is
 * queued or scheduled, else `queued`.
 */
export async function recipientStates(redis, key, m) {
    const addresses = recipientAddresses(m);
    if (addresses.length === 0)
        return [];
    const fields = await redis.hmget(key, ...addresses.map((a) => `r:${a}`));
    const pending = m.status === 'scheduled' ? 'scheduled' : 'queued';
    return addresses.map((address, i) => {
        const held = fields[i];
        if (held === null || held === undefined)
            return { address, status: pending, attempts: 0, last_event_at: null };
        const [status, rank, attempts, last] = held.split(' ');
        return {
            address,
            status: Number(rank) >= 0 ? status : pending,
            attempts: Number(attempts),
            last_event_at: Number(last) > 0 ? new Date(Number(last)).toISOString() : null
        };
    });
}
//# sourceMappingURL=recipient_states.js.map