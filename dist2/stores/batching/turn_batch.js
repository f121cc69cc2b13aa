/**
 * What `flush` gives an item in place of its result when that item alone failed: its caller rejects with `reason`,
 * the other items of the batch keep their results.
 */
export class ItemFailure {
    reason;
    constructor(reason) {
        this.reason = reason;
    }
}
/**
 * Gathers the items added in one turn of the event loop (or within a few milliseconds, see `after`) and sends
 * them in one `flush`: one round trip (a Redis script, a transaction, a thread hand-off) for a batch instead of
 * one per item. Each `add` resolves with its item's result. The batch leaves early when it reaches `maxItems`.
 */
export class TurnBatch {
    items = [];
    /** One per item: none for an item `push`ed without waiting for its result. */
    waiters = [];
    timer;
    sending = new Set();
    flushFn;
    maxItems;
    after;
    flushNow = () => { this.flush(); };
    constructor(options) {
        this.flushFn = options.flush;
        this.maxItems = options.maxItems ?? Infinity;
        this.after = options.after ?? 'turn';
    }
    /** Items gathered and not sent yet. */
    get pending() {
        return this.items.length;
    }
    /** Adds an item to the batch being gathered; resolves with its result once the batch is sent. */
    async add(item) {
        return await new Promise((resolve, reject) => {
            this.items.push(item);
            this.waiters.push({ resolve, reject });
            this.schedule();
        });
    }
    schedule() {
        if (this.items.length >= this.maxItems)
            this.flush();
        else if (this.timer === undefined) {
            this.timer = this.after === 'turn' ? setImmediate(this.flushNow) : setTimeout(this.flushNow, this.after);
        }
    }
    /**
     * Adds an item whose result nobody waits for (an acknowledgement, say): no promise is made for it, and a failed
     * batch is the flush's own to report.
     */
    push(item) {
        this.items.push(item);
        this.waiters.push(undefined);
        this.schedule();
    }
    /** Sends what is gathered now (nothing when nothing is). */
    flush() {
        this.cancelTimer();
        const items = this.items;
        if (items.length === 0)
            return;
        const waiters = this.waiters;
        this.items = [];
        this.waiters = [];
        let sent;
        try {
            sent = this.flushFn(items);
        }
        catch (err) {
            sent = Promise.reject(err);
        }
        const settled = sent.then((results) => {
            waiters.forEach((w, i) => {
                const r = results[i];
                if (w === undefined)
                    return;
                if (r instanceof ItemFailure)
                    w.reject(r.reason);
                else
                    w.resolve(r);
            });
        }, (err) => { for (const w of waiters)
            w?.reject(err); });
        this.sending.add(settled);
        void settled.finally(() => this.sending.delete(settled));
    }
    /** Sends what is gathered and waits until every batch sent so far is answered. */
    async close() {
        this.flush();
        await Promise.all([...this.sending]);
    }
    cancelTimer() {
        if (this.timer === undefined)
            return;
        if (this.after === 'turn')
            clearImmediate(this.timer);
        else
            clearTimeout(this.timer);
        this.timer = undefined;
    }
}
//# sourceMappingURL=turn_batch.js.map