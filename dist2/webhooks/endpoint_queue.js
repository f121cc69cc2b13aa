/** Waiting work beyond what the endpoint finishes in this long is not held for it at fan-out. */
const HOLD_MS = 1000;
const UNPROVEN_CAPACITY = 500;
/** All slots busy and nothing finished for this long: the receiver is stalled (dead, hanging or very slow). */
const STALL_MS = 1000;
/**
 * Work for one endpoint (an organisation's endpoint origin): at most `concurrency` attempts in flight, at most
 * `maxWaiting` waiting. Each endpoint has its own queue, so a slow or dead receiver only ever holds its own slots,
 * also on a host that other organisations' webhooks use.
 */
export class EndpointQueue {
    concurrency;
    maxWaiting;
    run;
    failed;
    active = 0;
    waiting = [];
    /** Completions in the current one-second window and in the one before it. */
    windowStart = Date.now();
    windowCount = 0;
    previousCount = 0;
    /** Whether a window before the current one exists (else the rate is the current window's alone). */
    rolled = false;
    completions = 0;
    lastCompletionAt = 0;
    /** When the last free slot was taken (all slots busy since then, if `active === concurrency`). */
    fullSince = 0;
    createdAt = Date.now();
    /**
     * `run` makes one attempt and settles its item itself; `failed` is told when it rejects instead (an
     * unexpected fault: the item is still unsettled, and the caller logs it and hands it back).
     */
    constructor(concurrency, maxWaiting, run, failed) {
        this.concurrency = concurrency;
        this.maxWaiting = maxWaiting;
        this.run = run;
        this.failed = failed;
    }
    /** false when the endpoint is saturated and its queue is full: the caller hands the item back for later. */
    offer(item) {
        if (this.active < this.concurrency) {
            this.start(item);
            return true;
        }
        if (this.waiting.length >= this.maxWaiting)
            return false;
        this.waiting.push(item);
        return true;
    }
    /** Whether any attempt to this endpoint has finished yet. */
    get answered() {
        return this.completions > 0;
    }
    get freeSlots() {
        return Math.max(0, this.concurrency - this.active);
    }
    /** Room for `n` more items without going past `maxWaiting`. */
    hasRoom(n) {
        return this.waiting.length + Math.max(0, n - (this.concurrency - this.active)) <= this.maxWaiting;
    }
    start(item) {
        this.active++;
        if (this.active === this.concurrency)
            this.fullSince = Date.now();
        this.run(item).catch((err) => { this.failed(err, item); }).finally(() => {
            this.active--;
            const now = Date.now();
            this.roll(now);
            this.windowCount++;
            this.completions++;
            this.lastCompletionAt = now;
            const next = this.waiting.shift();
            if (next !== undefined)
                this.start(next);
        });
    }
    roll(now) {
        const age = now - this.windowStart;
        if (age < 1000)
            return;
        this.previousCount = age < 2000 ? this.windowCount : 0;
        this.rolled = true;
        this.windowCount = 0;
        this.windowStart = now;
    }
    /**
     * Completions per second over the current window and the one before it (a receiver that answers in bursts,
     * such as a slow one whose slots all finish together, is judged by its average, not by its bursts); 0 once
     * nothing has completed for two seconds.
     */
    ratePerS(now) {
        this.roll(now);
        const elapsed = Math.max(250, now - this.windowStart);
        if (!this.rolled)
            return (this.windowCount * 1000) / elapsed;
        return ((this.previousCount + this.windowCount) * 1000) / (1000 + elapsed);
    }
    /** A new endpoint whose pace is not known yet. */
    unproven(now) {
        return this.completions === 0 && now - this.createdAt < HOLD_MS;
    }
    /**
     * Whether this endpoint keeps pace: it is not stalled (every slot busy with nothing finished for a
     * moment) and, once a second of its pace is known, finishes at least one round of its slots a second.
     * Work for an endpoint that does not keep pace is parked in the job stream instead of held in memory, and
     * it never slows the fan-out.
     */
    keepsPace(now) {
        if (this.active >= this.concurrency && now - Math.max(this.fullSince, this.lastCompletionAt) > STALL_MS)
            return false;
        if (now - this.createdAt < HOLD_MS)
            return true;
        return this.ratePerS(now) >= this.concurrency;
    }
    /**
     * How much waiting work this endpoint may hold in memory: about a second of its work (never less than one
     * round of its slots), and in its first second, once it has answered, a fixed allowance while its pace is
     * measured. Before its first answer, one round of its slots: a receiver that hangs from the start would
     * otherwise keep hundreds of events (and their bodies) in memory until it is found stalled, long enough for
     * the garbage collector to move them to its old generation, which costs every other endpoint.
     */
    holdable(now) {
        if (this.completions === 0)
            return Math.min(this.maxWaiting, this.concurrency);
        const rate = this.ratePerS(now);
        const h = now - this.createdAt < HOLD_MS ? Math.max(UNPROVEN_CAPACITY, rate) : Math.max(this.concurrency, rate * (HOLD_MS / 1000));
        return Math.min(this.maxWaiting, h);
    }
    /**
     * Whether `n` more items may be queued here now rather than wait in the job stream: the endpoint keeps
     * pace and holds less than it may, or it has a free slot (how a stalled endpoint gets work again and
     * proves it is back). Never past `maxWaiting`.
     */
    canTake(n, now) {
        if (!this.hasRoom(n))
            return false;
        if (this.active < this.concurrency)
            return true;
        // Twice what it may hold: the fan-out pauses at what it may hold, and overshoots by a few events.
        return this.keepsPace(now) && this.waiting.length < 2 * this.holdable(now);
    }
    /**
     * What this endpoint contributes to the backpressure that paces the engine: its waiting work (up to what
     * it may hold) and what it may hold, or nothing when it does not keep pace (a slow or dead receiver, whose
     * work waits in the job stream instead of holding healthy endpoints back).
     */
    pacing(now) {
        if (!this.keepsPace(now))
            return { waiting: 0, capacity: 0 };
        const capacity = this.holdable(now);
        return { waiting: Math.min(this.waiting.length, capacity), capacity };
    }
    /** How long until the waiting queue has likely drained, for handing an overflowing item back to the stream. */
    retryLaterMs(now) {
        if (this.unproven(now))
            return 2000; // no measure of its pace yet
        const perS = this.ratePerS(now);
        if (perS < 0.05)
            return 30_000; // nothing finishes: a dead or very slow receiver
        return Math.min(60_000, Math.max(250, Math.round((this.waiting.length / perS) * 1000)));
    }
    get idle() {
        return this.active === 0 && this.waiting.length === 0;
    }
    /** Takes every waiting item out (shutdown hands them back to the stream). */
    takeWaiting() {
        return this.waiting.splice(0);
    }
}
//# sourceMappingURL=endpoint_queue.js.map