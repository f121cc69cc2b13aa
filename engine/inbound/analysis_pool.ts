import { availableParallelism } from 'node:os'
import { Piscina } from 'piscina'
import type { AnalysisRequest, MessageAnalysis } from './analysis.ts'

/**
 * Parsing, DKIM body hashing and content scoring are CPU work; they run on worker threads so the SMTP sessions
 * on the main thread keep answering while a burst of mail is processed. Each thread overlaps several messages,
 * since a good part of a message's time is DNS look-ups. The consumer already bounds what is in flight, so the
 * queue never grows past that.
 */
export const ANALYSIS_TASKS_PER_THREAD = 32

export class AnalysisPool {
  private readonly pool: Piscina

  constructor (dnsServers: readonly string[], threads = Math.max(1, Math.min(4, availableParallelism() - 1))) {
    this.pool = new Piscina({
      filename: new URL('./analysis_worker.js', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      concurrentTasksPerWorker: ANALYSIS_TASKS_PER_THREAD,
      // The threads hold DNS sockets and timers between tasks; Atomics waits would freeze them.
      atomics: 'disabled',
      idleTimeout: 60_000,
      workerData: { dnsServers: [...dnsServers] }
    })
  }

  async analyze (req: AnalysisRequest): Promise<MessageAnalysis> {
    return await this.pool.run(req) as MessageAnalysis
  }

  async close (): Promise<void> {
    await this.pool.close({ force: false })
  }
}
