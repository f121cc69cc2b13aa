/** A working() per message at most this often, however many of its jobs wait. */
const WORKING_EVERY_MS = 1000;
/** When a job of a batch cannot be queued again, the whole batch comes back after this long. */
const BATCH_RETRY_MS = 5000;
/**
 * Settles for the jobs of one batch message: the message is acknowledged once every job is settled. A job
 * that must wait (a nak) is first stored as a job of its own with that delay; if that fails, the whole
 * batch is handed back and comes again (its other jobs may then be sent twice: at least once). The message's
 * acknowledgement goes through `acks`.
 */
export function batchSettles(m, jobs, requeue, acks) {
    let remaining = jobs.length;
    let handedBack = false;
    let workingAt = 0;
    const done = () => { if (--remaining === 0 && !handedBack)
        acks.add(m); };
    const handBack = () => {
        if (handedBack)
            return;
        handedBack = true;
        m.nak(BATCH_RETRY_MS);
    };
    return jobs.map((job) => ({
        ack: done,
        nak: (delayMs = 0) => { requeue(job, delayMs).then(done, handBack); },
        working: () => {
            const now = Date.now();
            if (now - workingAt < WORKING_EVERY_MS)
                return;
            workingAt = now;
            m.working();
        }
    }));
}
//# sourceMappingURL=settle.js.map