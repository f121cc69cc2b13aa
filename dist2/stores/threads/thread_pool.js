import { Piscina } from 'piscina';
import { reportThreadFailures } from './thread_failures.js';
/** How long a pool left without a thread waits before a new pool takes its place. */
const REPLACE_POOL_PAUSE_MS = 1_000;
/** How long closing waits for the close task before it ends the threads anyway (a thread that never loaded). */
const CLOSE_TASK_WAIT_MS = 5_000;
/**
 * A piscina pool of threads that never leaves a task waiting for ever, and closes within a bound.
 *
 * Piscina replaces a thread that fails, but not one that fails before it is ready (it then assumes every new
 * thread would fail the same way): a pool left with no thread keeps its waiting tasks for ever. Here a new pool
 * takes its place after a pause, and the old one is destroyed, so its waiting tasks fail and their work is
 * handed back. Failures are logged through `reportThreadFailures` (without an `error` listener piscina's emit
 * would stop the process). Threads run with `atomics: 'disabled'`: they keep sockets and timers alive between
 * tasks, which Atomics waits would freeze.
 */
export class ThreadPool {
    options;
    pool;
    report;
    closing = false;
    closed;
    constructor(options, log) {
        this.options = options;
        this.report = reportThreadFailures(log, options.name);
        this.pool = this.open();
    }
    open() {
        const o = this.options;
        const pool = new Piscina({
            filename: o.entry.href,
            minThreads: 1,
            maxThreads: o.maxThreads,
            atomics: 'disabled',
            concurrentTasksPerWorker: o.concurrentTasksPerWorker,
            ...(o.maxQueue !== undefined ? { maxQueue: o.maxQueue } : {}),
            idleTimeout: o.idleTimeout,
            workerData: o.workerData
        });
        pool.on('error', (err) => {
            this.report(err);
            // A thread that failed before it took any task (the one piscina started in place of a failed one) is not
            // replaced by piscina, and tasks waiting for it would wait for ever: a new pool takes the thread's place
            // after a pause, and the old one's waiting tasks fail.
            if (pool.threads.length > 0)
                return;
            setTimeout(() => {
                if (this.closing || this.pool !== pool)
                    return;
                this.pool = this.open();
                void pool.destroy();
            }, REPLACE_POOL_PAUSE_MS);
        });
        return pool;
    }
    /** Tasks waiting for a thread: a caller with a bound of its own refuses work at it rather than reaching `maxQueue`. */
    get queueSize() {
        return this.pool.queueSize;
    }
    async run(task, transferList) {
        return await this.pool.run(task, transferList !== undefined ? { transferList } : {});
    }
    /** Runs the close task (waiting at most 5 s for it), then ends the threads. A second call waits for the first. */
    async close() {
        this.closed ??= this.closeThreads();
        await this.closed;
    }
    async closeThreads() {
        this.closing = true;
        const pool = this.pool;
        // A thread that never loaded would keep the task waiting for ever. (Not an abort signal: piscina runs a task
        // that has one only on a thread with no other task, after the tasks in flight.)
        let timer;
        await Promise.race([
            pool.run(this.options.closeTask).catch(() => { }),
            new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_TASK_WAIT_MS); })
        ]);
        clearTimeout(timer);
        await pool.destroy();
    }
}
//# sourceMappingURL=thread_pool.js.map