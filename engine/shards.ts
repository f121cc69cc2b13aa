import type { Logger } from 'pino'
import { ThreadPool } from '../stores/threads/mod.ts'
import type { ActorSettings, ActorTask, DeliverResult, DeliverTask } from './actor/task.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

/**
 * The shard actors: one thread pool per engine thread, exactly one thread each (the thread keeps SMTP sockets, a
 * Redis client and timers alive between tasks). Shard n runs on thread n % threads, so one shard's work always
 * stays in one thread with that thread's connection pools.
 */
export class ShardActors {
  private readonly pools: ThreadPool[] = []

  /**
   * `entry` is the file each thread loads (engine/actor/thread.cts, which imports worker.ts); another one only
   * stands in for it to show what a thread that cannot load does.
   */
  constructor (
    settings: ActorSettings,
    readonly threads: number,
    shardsPerThread: number,
    shardCapacity: number,
    private readonly metrics: OutboxMetrics,
    log: Logger,
    entry = new URL('./actor/thread.cjs', import.meta.url)
  ) {
    const concurrency = shardsPerThread * shardCapacity
    for (let i = 0; i < threads; i++) {
      this.pools.push(new ThreadPool({
        name: `shard thread ${i}`,
        entry,
        maxThreads: 1,
        // each task is one message; its SMTP sends are awaited inside, so many run at once on the thread
        concurrentTasksPerWorker: concurrency,
        // dispatchers never hand over more than their capacity; the queue bound catches a bug, not load
        maxQueue: concurrency,
        idleTimeout: Number.POSITIVE_INFINITY,
        workerData: settings,
        // the thread closes its SMTP pools and Redis client
        closeTask: { kind: 'close' } satisfies ActorTask
      }, log))
    }
  }

  threadOf (shard: number): number {
    return shard % this.threads
  }

  /**
   * Runs the task on the shard's thread. The thread measures its SMTP attempts and sends them back with the
   * results; they are counted here, in the main thread's registry (a thread's own registry would not be scraped).
   */
  async deliver (shard: number, task: DeliverTask): Promise<DeliverResult> {
    const result = await this.pools[this.threadOf(shard)]!.run(task satisfies ActorTask) as DeliverResult
    for (const a of result.attempts ?? []) this.metrics.smtpAttempts[a.destination][a.result].observe(a.seconds)
    return result
  }

  /**
   * Asks every thread to close its pools and Redis client, then ends the threads (waiting at most 5 s for a thread
   * that never loaded). A second call waits for the first.
   */
  async close (): Promise<void> {
    await Promise.all(this.pools.map(async (p) => { await p.close() }))
  }
}
