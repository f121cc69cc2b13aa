/**
 * When applying to the read model fails, how long to wait before trying again: doubling from `firstMs` up to
 * `maxMs`, reset by a success. Failures are grouped in rounds: an attempt started before the round's first failure
 * that fails too (the other events in flight when Redis filled up) adds no doubling, so the wait grows once per
 * round, and a round makes one attempt.
 */
export class ApplyBackoff {
    firstMs;
    maxMs;
    /** 0 while applying succeeds. */
    delayMs = 0;
    /** No new attempt before this time (ms since the epoch). */
    pausedUntil = 0;
    /** Failures since applying last succeeded. */
    failures = 0;
    /** The time of the first of those failures. */
    failingSince = 0;
    round = 0;
    constructor(firstMs, maxMs) {
        this.firstMs = firstMs;
        this.maxMs = maxMs;
    }
    get backingOff() {
        return this.delayMs > 0;
    }
    /** The round an attempt starting now belongs to; hand it back to `failed`. */
    get current() {
        return this.round;
    }
    /** An attempt of `round` failed at `nowMs`. Returns true when this failure opened a new round (the wait grew). */
    failed(round, nowMs) {
        this.failures++;
        if (this.failures === 1)
            this.failingSince = nowMs;
        if (round !== this.round)
            return false;
        this.round++;
        this.delayMs = this.delayMs === 0 ? this.firstMs : Math.min(this.maxMs, this.delayMs * 2);
        this.pausedUntil = nowMs + this.delayMs;
        return true;
    }
    succeeded() {
        this.delayMs = 0;
        this.pausedUntil = 0;
        this.failures = 0;
        this.round++;
    }
}
//# sourceMappingURL=apply_backoff.js.map