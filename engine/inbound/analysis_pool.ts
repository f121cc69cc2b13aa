import { availableParallelism } from 'node:os'
import { Piscina } from 'piscina'
import type { Logger } from 'pino'
import { reportThreadFailures } from '../thread_failures.ts'
import type { AnalysisRequest, MessageAnalysis } from './analysis.ts'
import type { AnalysisOutcome } from './analysis_worker.ts'

/**
 * Parsing, DKIM body hashing and content scoring are CPU work; they run on worker threads so the SMTP sessions
 * on the main thread keep answering while a burst of mail is processed. Each thread overlaps several messages,
 * since a good part of a message's time is DNS look-ups. The consumer already bounds what is in flight, so the
 * queue never grows past that.
 */
export const ANALYSIS_TASKS_PER_THREAD = 32

interface Pending { req: AnalysisRequest, resolve: (m: MessageAnalysis) => void, reject: (err: Error) => void }

export class AnalysisPool {
  private readonly pool: Piscina
  private pending: Pending[] = []

  constructor (dnsServers: readonly string[], log: Logger, threads = Math.max(1, Math.min(4, availableParallelism() - 1))) {
    this.pool = new Piscina({
      // analysis_thread.cts imports analysis_worker.ts (engine/thread_entry.cts says why not directly)
      filename: new URL('./analysis_thread.cjs', import.meta.url).href,
      minThreads: 1,
      maxThreads: threads,
      concurrentTasksPerWorker: ANALYSIS_TASKS_PER_THREAD,
      // The threads hold DNS sockets and timers between tasks; Atomics waits would freeze them.
      atomics: 'disabled',
      idleTimeout: 60_000,
      workerData: { dnsServers: [...dnsServers] }
    })
    this.pool.on('error', reportThreadFailures(log, 'inbound analysis'))
  }

  /**
   * Messages asked for in the same turn of the event loop (the consumer gets them in batches) go to a thread as
   * one task: one message-port hand-off and one thread wake-up each way instead of one per message.
   */
  async analyze (req: AnalysisRequest): Promise<MessageAnalysis> {
    return await new Promise<MessageAnalysis>((resolve, reject) => {
      this.pending.push({ req, resolve, reject })
      if (this.pending.length === 1) setImmediate(() => { this.flush() })
    })
  }

  private flush (): void {
    const batch = this.pending
    this.pending = []
    // A message usually views a larger buffer (a socket read, a pooled slab) that a plain post would clone whole:
    // copy just its bytes and hand the copies over.
    const reqs = batch.map(({ req }) => ({ ...req, raw: new Uint8Array(req.raw) }))
    this.pool.run(reqs, { transferList: reqs.map((r) => r.raw.buffer as ArrayBuffer) }).then(
      (outcomes: AnalysisOutcome[]) => {
        outcomes.forEach((o, i) => { if (o.ok) batch[i]!.resolve(o.analysis); else batch[i]!.reject(new Error(o.error)) })
      },
      (err: Error) => { for (const p of batch) p.reject(err) }
    )
  }

  async close (): Promise<void> {
    // A thread ended in the middle of loading its module can abort the whole process. An empty task first means
    // the thread (the pool keeps one) has finished loading before it is ended.
    await this.pool.run([]).catch(() => {})
    await this.pool.close({ force: false })
  }
}
