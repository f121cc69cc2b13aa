import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
const SWEEP_LIMIT = 50_000;
const RELEASE_BATCH = 128; // sequences looked up at once while looking for ghost entries
const SNAPSHOT_TRIES = 5;
const ACK = new TextEncoder().encode('+ACK');
export async function sweepWorkQueue(io, t) {
    const before = await io.jsm.consumers.info(t.stream, t.consumer);
    const visible = await removeSettled(io.jsm, t, before);
    let removed = visible.removed;
    if (t.full)
        removed += await removeUnindexed(io.jsm, t, before, visible.kept);
    return { removed, released: await releaseGhosts(io, t) };
}
/**
 * Walks the subject's stored messages up to the ack floor (light) or the last delivered one (full), removing
 * the settled ones. `kept`: those left.
 */
async function removeSettled(jsm, t, c) {
    const last = t.full ? c.delivered.stream_seq : c.ack_floor.stream_seq;
    const kept = new Set();
    let removed = 0;
    let m = await storedFrom(jsm, t.stream, t.subject, 1);
    for (let read = 0; m !== null && m.seq <= last && read < (t.limit ?? SWEEP_LIMIT); read++) {
        if (await t.settled(m.data))
            removed += await remove(jsm, t.stream, m.seq);
        else
            kept.add(m.seq);
        m = await storedFrom(jsm, t.stream, t.subject, m.seq + 1);
    }
    return { removed, kept };
}
/**
 * The same crash can drop messages from nats-server 2.9's per-subject index: they stay stored and counted, but
 * no look-up by subject finds them. When the subject counts more messages than the walk saw, they are looked
 * for by sequence, from the oldest stored message to the last delivered one.
 */
async function removeUnindexed(jsm, t, c, kept) {
    const info = await jsm.streams.info(t.stream, { subjects_filter: t.subject });
    const counted = info.state.subjects?.[t.subject] ?? 0;
    const after = await jsm.consumers.info(t.stream, t.consumer);
    let hidden = counted - kept.size - after.num_pending;
    if (hidden <= 0)
        return 0;
    const last = Math.min(c.delivered.stream_seq, info.state.first_seq + (t.limit ?? SWEEP_LIMIT));
    let removed = 0;
    for (let seq = info.state.first_seq; seq <= last && hidden > 0; seq++) {
        if (kept.has(seq))
            continue;
        const m = await jsm.streams.getMessage(t.stream, { seq });
        if (m === null || m.subject !== t.subject)
            continue;
        hidden--;
        if (await t.settled(m.data))
            removed += await remove(jsm, t.stream, seq);
    }
    return removed;
}
/**
 * Releases ghost entries when the consumer counts more un-acknowledged entries than the subject has stored
 * messages it delivered. They are looked for from the last delivered sequence down, since a crash leaves them
 * among the newest; each sequence found not stored is acknowledged for the consumer, until the count adds up.
 */
async function releaseGhosts(io, t) {
    const first = await ghostCount(io.jsm, t);
    if (first === undefined || first.ghosts <= 0)
        return 0;
    const floor = first.consumer.ack_floor.stream_seq;
    let last = first;
    let seq = first.consumer.delivered.stream_seq;
    for (let looked = 0; seq > floor && looked < (t.limit ?? SWEEP_LIMIT); looked += RELEASE_BATCH) {
        const top = seq;
        const batch = Array.from({ length: Math.min(RELEASE_BATCH, top - floor) }, (_v, i) => top - i);
        seq -= batch.length;
        const stored = await Promise.all(batch.map(async (s) => await io.jsm.streams.getMessage(t.stream, { seq: s })));
        batch.forEach((s, i) => { if (stored[i] === null)
            io.nc.publish(ackSubject(t, s), ACK); });
        await io.nc.flush();
        const now = await ghostCount(io.jsm, t);
        if (now === undefined)
            continue;
        last = now;
        if (now.ghosts <= 0)
            break;
    }
    return Math.max(0, first.ghosts - Math.max(0, last.ghosts));
}
/**
 * Un-acknowledged entries beyond the subject's stored messages the consumer delivered, from consumer infos taken
 * just before and after the stream's count that agree (the shard's consumer keeps working meanwhile); undefined
 * when no two agreed. Stored messages the consumer counts as acknowledged hide as many ghosts: a full sweep
 * removes those first.
 */
async function ghostCount(jsm, t) {
    for (let i = 0; i < SNAPSHOT_TRIES; i++) {
        const a = await jsm.consumers.info(t.stream, t.consumer);
        const s = await jsm.streams.info(t.stream, { subjects_filter: t.subject });
        const b = await jsm.consumers.info(t.stream, t.consumer);
        if (a.num_ack_pending !== b.num_ack_pending || a.num_pending !== b.num_pending || a.delivered.stream_seq !== b.delivered.stream_seq)
            continue;
        const delivered = (s.state.subjects?.[t.subject] ?? 0) - b.num_pending;
        return { ghosts: b.num_ack_pending - delivered, consumer: b };
    }
    return undefined;
}
/**
 * The subject JetStream gives a delivery for its acknowledgement: `$JS.ACK.<stream>.<consumer>.<delivery count>.
 * <stream seq>.<consumer seq>.<timestamp>.<pending>`. Consumer sequence 0 lets the consumer take the one of its
 * entry, so an entry's acknowledgement moves the ack floor as the engine's own would.
 */
function ackSubject(t, seq) {
    return `$JS.ACK.${t.stream}.${t.consumer}.1.${seq}.0.0.0`;
}
/** 1 when the message was removed, 0 when it was gone already (acknowledged meanwhile). */
async function remove(jsm, stream, seq) {
    try {
        await jsm.streams.deleteMessage(stream, seq, false);
        return 1;
    }
    catch (err) {
        if (err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound)
            return 0;
        throw err;
    }
}
async function storedFrom(jsm, stream, subject, seq) {
    // `next_by_subj` is answered by nats-server 2.9 and later; the client's type lists it only for direct gets
    const query = { seq, next_by_subj: subject };
    return await jsm.streams.getMessage(stream, query);
}
/** After a reconnect, full sweeps: once the restarted server has loaded its streams, then as the backlog moves on. */
const AFTER_RECONNECT_MS = [3_000, 15_000, 45_000];
/**
 * Sweeps the held shards: fully at start, after every reconnect (AFTER_RECONNECT_MS) and when a light pass
 * found leftovers; lightly every `everyMs` otherwise; until `stop()`.
 */
export class WorkQueueSweeper {
    d;
    timer;
    stopped = false;
    running;
    constructor(d) {
        this.d = d;
    }
    start() {
        this.schedule(0, true, []);
        void (async () => {
            for await (const _ of this.d.reconnects) {
                if (this.stopped)
                    break;
                this.schedule(AFTER_RECONNECT_MS[0], true, AFTER_RECONNECT_MS.slice(1));
            }
        })();
    }
    stop() {
        this.stopped = true;
        clearTimeout(this.timer);
    }
    /** One pass over the held shards; passes never overlap. Resolves with whether anything was left behind. */
    async sweep(full) {
        while (this.running !== undefined)
            await this.running;
        let found = false;
        this.running = (async () => {
            for (const shard of this.d.shards()) {
                if (this.stopped)
                    return;
                const t = this.d.target(shard);
                try {
                    const r = await sweepWorkQueue(this.d.io, { stream: this.d.stream, ...t, settled: this.d.settled, full });
                    if (r.removed > 0 || r.released > 0) {
                        found = true;
                        this.d.onSwept(shard, r);
                    }
                }
                catch (err) {
                    this.d.onError(shard, err);
                }
            }
        })().finally(() => { this.running = undefined; });
        await this.running;
        return found;
    }
    /** The next pass in `ms`, full ones after each of `fullThen`, then light ones every `everyMs`. */
    schedule(ms, full, fullThen) {
        if (this.stopped)
            return;
        clearTimeout(this.timer);
        this.timer = setTimeout(() => {
            void this.sweep(full).catch(() => false).then((found) => {
                if (fullThen.length > 0)
                    this.schedule(fullThen[0], true, fullThen.slice(1));
                // what a light pass finds below the floor says there may be more above it
                else if (found && !full)
                    this.schedule(0, true, []);
                else
                    this.schedule(this.d.everyMs, false, []);
            });
        }, ms);
        this.timer.unref();
    }
}
//# sourceMappingURL=work_queue_sweep.js.map