import { Piscina } from 'piscina'
import type { Logger } from 'pino'
import { reportThreadFailures } from './thread_failures.ts'
import type { InternalErrorCode } from '../../protocol/mod.ts'

/** How long a pool left without a thread waits before a new pool takes its place. */
const REPLACE_POOL_PAUSE_MS = 1_000
/** How long closing waits for the close task before it ends the threads anyway (a thread that never loaded). */
const CLOSE_TASK_WAIT_MS = 5_000

/** Work handed to a pool after it closed (a lazy pool that never opened is not opened then). */
export class ThreadPoolClosedError extends Error {
  readonly code = 'thread_pool_closed' satisfies InternalErrorCode
}

export interface ThreadPoolOptions {
  /** Names the pool in the failure log (`pool` field): `shard thread 0`, `inbound analysis`, `content analysis`. */
  name: string
  /** The file each thread loads: a CommonJS entry that imports the thread's ES module (thread_entry.cts). */
  entry: URL
  /** At least one thread is kept (once the pool is open); more are started up to this while tasks wait. */
  maxThreads: number
  /**
   * Opened at the first task rather than at once: for work that many installations never ask for (content
   * analysis, inbound mail), so a process does not load a thread's modules (a second or two of CPU) and wait for
   * them when it closes, only to have been ready for nothing.
   */
  lazy?: boolean
  concurrentTasksPerWorker: number
  /** Tasks that may wait for a thread; unbounded when absent. */
  maxQueue?: number
  /** How long a thread above the first may stay idle before it ends. */
  idleTimeout: number
  workerData: unknown
  /**
   * Run once when the pool closes, before its threads are ended. It resolves only once a thread has loaded its
   * module, and a thread ended in the middle of loading can abort the whole process; the shard threads also use
   * it to close their connections.
   */
  closeTask: unknown
}

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
  private current: Piscina | undefined
  private readonly report: (err: Error) => void
  private closing = false
  private closed?: Promise<void>

  constructor (private readonly options: ThreadPoolOptions, log: Logger) {
    this.report = reportThreadFailures(log, options.name)
    if (options.lazy !== true) this.current = this.open()
  }

  private get pool (): Piscina {
    if (this.current === undefined && this.closing) throw new ThreadPoolClosedError(`the ${this.options.name} pool is closed`)
    this.current ??= this.open()
    return this.current
  }

  private open (): Piscina {
    const o = this.options
    const pool = new Piscina({
      filename: o.entry.href,
      minThreads: 1,
      maxThreads: o.maxThreads,
      atomics: 'disabled',
      concurrentTasksPerWorker: o.concurrentTasksPerWorker,
      ...(o.maxQueue !== undefined ? { maxQueue: o.maxQueue } : {}),
      idleTimeout: o.idleTimeout,
      workerData: o.workerData
    })
    pool.on('error', (err: Error) => {
      this.report(err)
      // A thread that failed before it took any task (the one piscina started in place of a failed one) is not
      // replaced by piscina, and tasks waiting for it would wait for ever: a new pool takes the thread's place
      // after a pause, and the old one's waiting tasks fail.
      if (pool.threads.length > 0) return
      setTimeout(() => {
        if (this.closing || this.current !== pool) return
        this.current = this.open()
        void pool.destroy()
      }, REPLACE_POOL_PAUSE_MS)
    })
    return pool
  }

  /** Tasks waiting for a thread: a caller with a bound of its own refuses work at it rather than reaching `maxQueue`. */
  get queueSize (): number {
    return this.current?.queueSize ?? 0
  }

  async run (task: unknown, transferList?: ArrayBuffer[]): Promise<unknown> {
    return await this.pool.run(task, transferList !== undefined ? { transferList } : {})
  }

  /** Runs the close task (waiting at most 5 s for it), then ends the threads. A second call waits for the first. */
  async close (): Promise<void> {
    this.closed ??= this.closeThreads()
    await this.closed
  }

  private async closeThreads (): Promise<void> {
    this.closing = true
    const pool = this.current
    if (pool === undefined) return // never asked for work: no thread to end
    // A thread that never loaded would keep the task waiting for ever. (Not an abort signal: piscina runs a task
    // that has one only on a thread with no other task, after the tasks in flight.)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      pool.run(this.options.closeTask).catch(() => {}),
      new Promise<void>((resolve) => { timer = setTimeout(resolve, CLOSE_TASK_WAIT_MS) })
    ])
    clearTimeout(timer)
    await pool.destroy()
  }
}
