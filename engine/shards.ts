import { Piscina } from 'piscina'
import type { Logger } from 'pino'
import { reportThreadFailures } from './thread_failures.ts'
import type { ActorSettings, ActorTask, DeliverResult, DeliverTask } from './actor/task.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

/**
 * The shard actors: one piscina pool per engine thread (exactly one thread each, `atomics: 'disabled'` because
 * the thread keeps SMTP sockets, a Redis client and timers alive between tasks). Shard n runs on thread
 * n % threads, so one shard's work always stays in one thread with that thread's connection pools.
 */
const REPLACE_POOL_PAUSE_MS = 1_000
const CLOSE_TASK_WAIT_MS = 5_000

export class ShardActors {
  private readonly pools: Piscina[] = []
  private closing = false
  private closed?: Promise<void>

  /**
   * `entry` is the file each thread loads (engine/actor/thread.cts, which imports worker.ts); another one only
   * stands in for it to show what a thread that cannot load does.
   */
  constructor (private readonly settings: ActorSettings, readonly threads: number, shardsPerThread: number, shardCapacity: number, private readonly metrics: OutboxMetrics, log: Logger, private readonly entry = new URL('./actor/thread.cjs', import.meta.url)) {
    this.concurrency = shardsPerThread * shardCapacity
    for (let i = 0; i < threads; i++) this.pools.push(this.open(i, reportThreadFailures(log, `shard thread ${i}`)))
  }

  private readonly concurrency: number

  private open (i: number, report: (err: Error) => void): Piscina {
    const pool = new Piscina({
      filename: this.entry.href,
      minThreads: 1,
      maxThreads: 1,
      atomics: 'disabled',
      // each task is one message; its SMTP sends are awaited inside, so many run at once on the thread
      concurrentTasksPerWorker: this.concurrency,
      // dispatchers never hand over more than their capacity; the queue bound catches a bug, not load
      maxQueue: this.concurrency,
      idleTimeout: Number.POSITIVE_INFINITY,
      workerData: this.settings
    })
    pool.on('error', (err: Error) => {
      report(err)
      // A thread that failed before it took any task (the one piscina started in place of a failed one) is not
      // replaced by piscina, and tasks waiting for it would wait for ever: a new pool takes the thread's place
      // after a pause, and the old one's waiting tasks fail, so their messages are handed back.
      if (pool.threads.length > 0) return
      setTimeout(() => {
        if (this.closing || this.pools[i] !== pool) return
        this.pools[i] = this.open(i, report)
        void pool.destroy()
      }, REPLACE_POOL_PAUSE_MS)
    })
    return pool
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

  /** Asks every thread to close its pools and Redis client, then ends the threads. A second call waits for the first. */
  async close (): Promise<void> {
    this.closed ??= this.closeThreads()
    await this.closed
  }

  private async closeThreads (): Promise<void> {
    this.closing = true
    await Promise.all(this.pools.map(async (p) => {
      // A thread that never loaded has nothing to close, and the task would wait for it for ever. (Not an abort
      // signal: piscina runs a task that has one only on a thread with no other task, after the sends in flight.)
      let timer: NodeJS.Timeout | undefined
      await Promise.race([
        p.run({ kind: 'close' } satisfies ActorTask).catch(() => {}),
        new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_TASK_WAIT_MS) })
      ])
      clearTimeout(timer)
      await p.destroy()
    }))
  }
}
