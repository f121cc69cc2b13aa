import { availableParallelism } from 'node:os'
import type { Logger } from 'pino'
import { ItemFailure, TurnBatch } from '../stores/batching/mod.ts'
import { ThreadPool } from '../stores/threads/mod.ts'
import type { AnalysisRequest, MessageAnalysis } from './analysis.ts'
import type { AnalysisOutcome } from './analysis_worker.ts'
import type { InternalErrorCode } from '../protocol/mod.ts'

/**
 * Parsing, DKIM body hashing and content scoring are CPU work; they run on worker threads so the SMTP sessions
 * on the main thread keep answering while a burst of mail is processed. Each thread overlaps several messages,
 * since a good part of a message's time is DNS look-ups. The consumer already bounds what is in flight, so the
 * queue never grows past that.
 */
export const ANALYSIS_TASKS_PER_THREAD = 32
/** A thread above the first ends after this long without work. */
const IDLE_THREAD_MS = 60_000

/**
 * The analysis of a message could not run because its thread failed (it could not load its code, or it ended in
 * the middle of the task) or the pool closed. Not the message's fault: the message is analysed again later.
 */
export class AnalysisUnavailable extends Error {
  readonly code = 'inbound_analysis_unavailable' satisfies InternalErrorCode
  constructor (options: ErrorOptions) {
    super('the inbound analysis threads failed', options)
    this.name = 'AnalysisUnavailable'
  }
}

export interface AnalysisPoolOptions {
  /** @default one per core but one, 1 to 4 */
  threads?: number
  /**
   * The file each thread loads (analysis_thread.cts, which imports analysis_worker.ts); another one only stands
   * in for it to show what a thread that cannot load does.
   */
  entry?: URL
}

export class AnalysisPool {
  private readonly pool: ThreadPool
  private readonly batch = new TurnBatch<AnalysisRequest, MessageAnalysis>({ flush: async (reqs) => await this.run(reqs) })

  constructor (dnsServers: readonly string[], log: Logger, options: AnalysisPoolOptions = {}) {
    this.pool = new ThreadPool({
      name: 'inbound analysis',
      entry: options.entry ?? new URL('./analysis_thread.cjs', import.meta.url),
      maxThreads: options.threads ?? Math.max(1, Math.min(4, availableParallelism() - 1)),
      concurrentTasksPerWorker: ANALYSIS_TASKS_PER_THREAD,
      lazy: true,
      idleTimeout: IDLE_THREAD_MS,
      workerData: { dnsServers: [...dnsServers] },
      // an empty batch: it resolves once the thread has loaded its module, so closing does not end it mid-load
      closeTask: []
    }, log)
  }

  /**
   * Messages asked for in the same turn of the event loop (the consumer gets them in batches) go to a thread as
   * one task: one message-port hand-off and one thread wake-up each way instead of one per message. Rejects with
   * AnalysisUnavailable when the thread failed, with a plain Error when the message itself could not be analysed.
   */
  async analyze (req: AnalysisRequest): Promise<MessageAnalysis> {
    return await this.batch.add(req)
  }

  private async run (batch: AnalysisRequest[]): Promise<Array<MessageAnalysis | ItemFailure>> {
    // A message usually views a larger buffer (a socket read, a pooled slab) that a plain post would clone whole:
    // copy just its bytes and hand the copies over.
    const reqs = batch.map((req) => ({ ...req, raw: new Uint8Array(req.raw) }))
    let outcomes: AnalysisOutcome[]
    try {
      outcomes = await this.pool.run(reqs, reqs.map((r) => r.raw.buffer as ArrayBuffer)) as AnalysisOutcome[]
    } catch (err) {
      return batch.map(() => new ItemFailure(new AnalysisUnavailable({ cause: err })))
    }
    return outcomes.map((o) => o.ok ? o.analysis : new ItemFailure(new Error(o.error)))
  }

  /** Waits for the threads to finish loading (at most 5 s), then ends them. */
  async close (): Promise<void> {
    await this.pool.close()
  }
}
