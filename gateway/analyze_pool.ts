import { availableParallelism } from 'node:os'
import { Piscina } from 'piscina'
import { ApiError, type ContentInput, type ContentReport } from '../protocol/mod.ts'

/**
 * Content analysis for `POST /v1/messages/analyze`, on worker threads. Parsing someone's HTML is CPU work whose
 * cost the body decides; on the gateway's own thread one request would hold up every other. The parse itself is
 * bounded (HTML_LIMITS); the queue is bounded too, and a full one answers 503 rather than buffering.
 */
export const ANALYZE_MAX_QUEUE = 64

export class AnalyzePool {
  private readonly pool: Piscina

  constructor (threads = Math.max(1, Math.min(2, availableParallelism() - 1))) {
    this.pool = new Piscina({
      filename: new URL('./analyze_worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      maxQueue: ANALYZE_MAX_QUEUE,
      idleTimeout: 60_000
    })
  }

  async analyze (input: ContentInput): Promise<ContentReport> {
    if (this.pool.queueSize >= ANALYZE_MAX_QUEUE) {
      throw new ApiError('service_unavailable', 'Too many analyses are waiting; retry shortly.', { retryAfter: 1 })
    }
    return await this.pool.run(input) as ContentReport
  }

  async close (): Promise<void> {
    // As in the inbound analysis pool: a thread ended while Node 20 still loads its ES module aborts the process,
    // so one empty task first makes sure the thread has finished loading.
    await this.pool.run(undefined).catch(() => {})
    await this.pool.close({ force: false })
  }
}
