/** How often a pool whose threads keep failing logs again; the failures in between are counted in that line. */
export const THREAD_FAILURE_LOG_MS = 60_000;
/**
 * The `error` listener of a piscina pool (ThreadPool). Piscina emits `error` when a thread ends with an error outside
 * any task: above all a thread whose code failed to load (thread_entry.cts); the tasks it held were
 * rejected already and the pool starts another thread. Without a listener the emit would throw in the main
 * thread and stop the process. The first failure is logged at once with `code: 'engine_thread_failed'`; further
 * ones at most once a minute, with the number seen since.
 */
export function reportThreadFailures(log, pool, now = Date.now) {
    let lastLogged = Number.NEGATIVE_INFINITY;
    let unlogged = 0;
    return (err) => {
        unlogged++;
        if (now() - lastLogged < THREAD_FAILURE_LOG_MS)
            return;
        log.error({ err, code: 'engine_thread_failed', pool, failures: unlogged }, 'a worker thread failed (its tasks were handed back); the pool starts another');
        lastLogged = now();
        unlogged = 0;
    };
}
//# sourceMappingURL=thread_failures.js.map