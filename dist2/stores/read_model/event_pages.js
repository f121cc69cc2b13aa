import { READ_MODEL_KEYS as K } from './message_store_keys.js';
/** Ids read from one type index per Redis call: what one index may hold in memory at a time. */
const INDEX_PAGE = 200;
const before = (a, b) => a.ms < b.ms || (a.ms === b.ms && a.id < b.id);
/**
 * The org's events (live and sandbox) of these types at or after `fromMs`, oldest first, in batches of at most
 * `batch`: the type indexes are read forward by score in pages of INDEX_PAGE and merged, so what is held at once is
 * bounded by the number of indexes, never by how many events the range holds. An event added behind a cursor
 * while it reads is not returned (one of the same millisecond may be returned twice).
 */
export async function* eventIdBatches(redis, orgId, types, fromMs, batch) {
    const cursors = ['live', 'test'].flatMap((env) => types.map((t) => ({
        key: K.eventsByType(orgId, env, t), ms: fromMs, sameMs: 0, page: [], at: 0, done: false
    })));
    let out = [];
    for (;;) {
        await refill(redis, cursors.filter((c) => c.at >= c.page.length && !c.done));
        // Merge until an index that may hold more runs out of its page: its next page may hold the oldest one.
        let exhausted = false;
        while (!exhausted) {
            let next;
            for (const c of cursors)
                if (c.at < c.page.length && (next === undefined || before(c.page[c.at], next.page[next.at])))
                    next = c;
            if (next === undefined)
                break;
            out.push(next.page[next.at++]);
            if (out.length >= batch) {
                yield out;
                out = [];
            }
            exhausted = next.at >= next.page.length && !next.done;
        }
        if (!exhausted)
            break;
    }
    if (out.length > 0)
        yield out;
}
async function refill(redis, cursors) {
    if (cursors.length === 0)
        return;
    const p = redis.pipeline();
    // From the score reached, skipping the ids of that score already read (ties are ordered by id).
    for (const c of cursors)
        p.zrangebyscore(c.key, c.ms, '+inf', 'WITHSCORES', 'LIMIT', c.sameMs, INDEX_PAGE);
    const results = (await p.exec()) ?? [];
    cursors.forEach((c, i) => {
        const [err, flat] = results[i] ?? [new Error('no reply'), null];
        if (err !== null)
            throw err;
        const list = flat;
        c.page = [];
        c.at = 0;
        for (let j = 0; j + 1 < list.length; j += 2) {
            const ms = Number(list[j + 1]);
            c.page.push({ id: list[j], ms });
            if (ms === c.ms)
                c.sameMs++;
            else {
                c.ms = ms;
                c.sameMs = 1;
            }
        }
        c.done = c.page.length < INDEX_PAGE;
    });
}
//# sourceMappingURL=event_pages.js.map