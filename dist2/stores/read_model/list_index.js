import { READ_MODEL_KEYS as K } from './message_store_keys.js';
import { hasTag } from './tag_index.js';
/** Both filters, or whichever is given. */
function both(a, b) {
    if (a === undefined)
        return b;
    if (b === undefined)
        return a;
    return (item) => a(item) && b(item);
}
/** Status, tag and stuck checked on each message: what a `to` listing (read from the recipient index) keeps. */
export function messageFilter(q) {
    const { status, tag } = q;
    const byStatus = status === undefined ? undefined : (m) => m.status === status;
    const byTag = tag === undefined ? undefined : (m) => hasTag(m.tags, tag);
    const byStuck = q.stuck === true ? (m) => m.stuck : undefined;
    return both(both(byStatus, byTag), byStuck);
}
/**
 * The index a message listing without `to` reads in one environment (the due index for stuck messages, else tag,
 * else status, else all) and the filter it leaves to checking each item, which costs a scan bounded by pageIndex's
 * budget. Stuck messages are read from the due index up to now less the grace (the caller bounds the range); each is
 * checked again, since an entry may lag its message by one write.
 */
export function messageIndex(orgId, env, q) {
    const { status, tag } = q;
    if (q.stuck === true)
        return { key: K.messagesDue(orgId, env), keep: messageFilter(q) };
    if (tag !== undefined)
        return { key: K.messagesTagged(orgId, env, tag), keep: status === undefined ? undefined : (m) => m.status === status };
    if (status !== undefined)
        return { key: K.messagesByStatus(orgId, env, status), keep: undefined };
    return { key: K.messages(orgId, env), keep: undefined };
}
/**
 * The same for events: message (whatever its environment), else tag, else type, else all of one environment.
 */
export function eventIndex(orgId, env, q) {
    const { type, tag } = q;
    const byType = type === undefined ? undefined : (e) => e.type === type;
    const byTag = tag === undefined ? undefined : (e) => hasTag(e.data.tags, tag);
    if (q.message_id !== undefined)
        return { key: K.messageEvents(orgId, q.message_id), keep: both(byType, byTag) };
    if (tag !== undefined)
        return { key: K.eventsTagged(orgId, env, tag), keep: byType };
    if (type !== undefined)
        return { key: K.eventsByType(orgId, env, type), keep: undefined };
    return { key: K.events(orgId, env), keep: undefined };
}
//# sourceMappingURL=list_index.js.map