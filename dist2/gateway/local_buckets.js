/** Buckets kept at most; past it the oldest is dropped (it starts full again, as a drained one would). */
const MAX_BUCKETS = 100_000;
/**
 * The same GCRA as gcra.lua, in this process's memory: what the rate limiter decides with while Redis refuses
 * its writes (full). Each gateway process keeps its own buckets, so N gateways allow up to N times a limit.
 */
export class LocalBuckets {
    /** bucket key → theoretical arrival time, in ms. */
    tat = new Map();
    take(key, perMinute, burst, nowMs) {
        const interval = 60_000 / perMinute;
        const tau = interval * burst;
        let tat = this.tat.get(key) ?? nowMs;
        if (tat < nowMs)
            tat = nowMs;
        const newTat = tat + interval;
        const allowAt = newTat - tau;
        if (nowMs < allowAt) {
            return {
                allowed: false,
                limit: perMinute,
                remaining: Math.max(0, Math.floor((tau - (tat - nowMs)) / interval)),
                retryAfterS: Math.max(1, Math.ceil((allowAt - nowMs) / 1000)),
                resetS: Math.ceil((tat - nowMs) / 1000)
            };
        }
        this.tat.delete(key); // re-inserted last, so the oldest bucket is the first one dropped
        this.tat.set(key, newTat);
        if (this.tat.size > MAX_BUCKETS)
            this.tat.delete(this.tat.keys().next().value);
        return {
            allowed: true,
            limit: perMinute,
            remaining: Math.max(0, Math.floor((tau - (newTat - nowMs)) / interval)),
            retryAfterS: 0,
            resetS: Math.ceil((newTat - nowMs) / 1000)
        };
    }
}
//# sourceMappingURL=local_buckets.js.map