import { availableParallelism } from 'node:os';
import { ItemFailure, TurnBatch } from '../stores/batching/mod.js';
import { ThreadPool } from '../stores/threads/mod.js';
/**
 * Parsing, DKIM body hashing and content scoring are CPU work; they run on worker threads so the SMTP sessions
 * on the main thread keep answering while a burst of mail is processed. Each thread overlaps several messages,
 * since a good part of a message's time is DNS look-ups. The consumer already bounds what is in flight, so the
 * queue never grows past that.
 */
export const ANALYSIS_TASKS_PER_THREAD = 32;
/** A thread above the first ends after this long without work. */
const IDLE_THREAD_MS = 60_000;
/**
 * The analysis of a message could not run because its thread failed (it could not load its code, or it ended in
 * the middle of the task) or the pool closed. Not the message's fault: the message is analysed again later.
 */
export class AnalysisUnavailable extends Error {
    code = 'inbound_analysis_unavailable';
    constructor(options) {
        super('the inbound analysis threads failed', options);
        this.name = 'AnalysisUnavailable';
    }
}
export class AnalysisPool {
    pool;
    batch = new TurnBatch({ flush: async (reqs) => await this.run(reqs) });
    constructor(dnsServers, log, options = {}) {
        this.pool = new ThreadPool({
            name: 'inbound analysis',
            entry: options.entry ?? new URL('./analysis_thread.cjs', import.meta.url),
            maxThreads: options.threads ?? Math.max(1, Math.min(4, availableParallelism() - 1)),
            concurrentTasksPerWorker: ANALYSIS_TASKS_PER_THREAD,
            idleTimeout: IDLE_THREAD_MS,
            workerData: { dnsServers: [...dnsServers] },
            // an empty batch: it resolves once the thread has loaded its module, so closing does not end it mid-load
            closeTask: []
        }, log);
    }
    /**
     * Messages asked for in the same turn of the event loop (the consumer gets them in batches) go to a thread as
     * one task: one message-port hand-off and one thread wake-up each way instead of one per message. Rejects with
     * AnalysisUnavailable when the thread failed, with a plain Error when the message itself could not be analysed.
     */
    async analyze(req) {
        return await this.batch.add(req);
    }
    async run(batch) {
        // A message usually views a larger buffer (a socket read, a pooled slab) that a plain post would clone whole:
        // copy just its bytes and hand the copies over.
        const reqs = batch.map((req) => ({ ...req, raw: new Uint8Array(req.raw) }));
        let outcomes;
        try {
            outcomes = await this.pool.run(reqs, reqs.map((r) => r.raw.buffer));
        }
        catch (err) {
            return batch.map(() => new ItemFailure(new AnalysisUnavailable({ cause: err })));
        }
        return outcomes.map((o) => o.ok ? o.analysis : new ItemFailure(new Error(o.error)));
    }
    /** Waits for the threads to finish loading (at most 5 s), then ends them. */
    async close() {
        await this.pool.close();
    }
}
//# sourceMappingURL=analysis_pool.js.map