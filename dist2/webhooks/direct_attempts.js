/**
 * The way in for the fan-out's first attempts. When the endpoint keeps pace and has room (or has a free slot), the
 * fan-out makes attempt 1 itself, through the same AttemptSource as jobs read from the stream, instead of writing a
 * job and reading it back.
 */
export class DirectAttempts {
    source;
    jobs;
    constructor(source, jobs) {
        this.source = source;
        this.jobs = jobs;
    }
    /**
     * Resolves once the attempt is made and its retry (if any) is stored as a job; rejects when that could not be
     * stored, and the caller then hands the event back. Returns undefined when the endpoint cannot take it: the
     * caller parks the job.
     */
    offer(job, webhook, event, body) {
        const target = this.source.target(webhook);
        if (target === undefined || !target.queue.canTake(1, Date.now()))
            return undefined;
        return new Promise((resolve, reject) => {
            const settle = {
                ack: resolve,
                // A direct attempt that must wait becomes a job due after the delay, like any other.
                nak: (delayMs = 0) => { this.jobs.requeue(job, delayMs).then(resolve, reject); },
                working: () => event.working()
            };
            this.source.offer(target, { settle, job, webhook, url: target.url, body });
        });
    }
}
//# sourceMappingURL=direct_attempts.js.map