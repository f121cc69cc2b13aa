import { availableParallelism } from 'node:os'
import type { Logger } from 'pino'
import { ApiError, type ContentInput, type ContentReport } from '../protocol/mod.ts'
import { ThreadPool } from '../stores/threads/mod.ts'

/**
 * Content analysis for `POST /v1/messages/analyze`, on worker threads. Parsing someone's HTML is CPU work whose
 * cost the body decides; on the gateway's own thread one request would hold up every other. The parse itself is
 * bounded (HTML_LIMITS); the queue is bounded too, and a full one answers 503 rather than buffering.
 */
export const ANALYZE_MAX_QUEUE = 64
/** A thread above the first ends after this long without work. */
const IDLE_THREAD_MS = 60_000

export class AnalyzePool {
  private readonly pool: ThreadPool

  constructor (log: Logger, threads = Math.max(1, Math.min(2, availableParallelism() - 1))) {
    this.pool = new ThreadPool({
      name: 'content analysis',
      entry: new URL('./analyze_thread.cjs', import.meta.url),
      maxThreads: threads,
      lazy: true,
      // one analysis at a time per thread: each is CPU work from start to end
      concurrentTasksPerWorker: 1,
      maxQueue: ANALYZE_MAX_QUEUE,
      idleTimeout: IDLE_THREAD_MS,
      workerData: undefined,
      // answered once the thread has loaded its module (see analyze_worker.ts), so closing does not end it mid-load
      closeTask: undefined
    }, log)
  }

  async analyze (input: ContentInput): Promise<ContentReport> {
    if (this.pool.queueSize >= ANALYZE_MAX_QUEUE) {
      throw new ApiError('service_unavailable', 'Too many analyses are waiting; retry shortly.', { retryAfter: 1 })
    }
    return await this.pool.run(input) as ContentReport
  }

  /** Waits for the threads to finish loading (at most 5 s), then ends them. */
  async close (): Promise<void> {
    await this.pool.close()
  }
}
