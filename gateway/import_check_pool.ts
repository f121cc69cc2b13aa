import type { Logger } from 'pino'
import { ApiError } from '../protocol/mod.ts'
import { ThreadPool } from '../stores/threads/mod.ts'
import type { CheckedImport } from './control/suppression_import.ts'
import type { ImportCheckRefusal, ImportCheckTask } from './import_check_worker.ts'

/** Imports waiting for the thread at most; one more is 503 `service_unavailable`. */
export const IMPORT_CHECK_MAX_QUEUE = 4
/** The thread ends after this long without an import. */
const IDLE_THREAD_MS = 60_000

/**
 * Reading and checking a suppression import (`POST /v1/suppressions/import`), on a worker thread. A body of
 * 100,000 addresses is up to 32 MB: on the gateway's own thread, `JSON.parse` of it alone would hold up every
 * other request for a quarter of a second, and the CSV split and the checks of every line for as long again. The
 * event loop only writes the checked entries, a window at a time.
 */
export class ImportCheckPool {
  private readonly pool: ThreadPool

  constructor (log: Logger) {
    this.pool = new ThreadPool({
      name: 'suppression import check',
      entry: new URL('./import_check_thread.cjs', import.meta.url),
      // imports are rare and each is CPU work from start to end: one thread, the others wait their turn
      maxThreads: 1,
      lazy: true,
      concurrentTasksPerWorker: 1,
      maxQueue: IMPORT_CHECK_MAX_QUEUE,
      idleTimeout: IDLE_THREAD_MS,
      workerData: undefined,
      closeTask: undefined
    }, log)
  }

  /** The entries and summary of an import body; an ApiError for a body that is not an import (as checkImport). */
  async check (raw: Buffer, contentType: string, streams: string[], now = Date.now()): Promise<CheckedImport> {
    if (this.pool.queueSize >= IMPORT_CHECK_MAX_QUEUE) {
      throw new ApiError('service_unavailable', 'Too many suppression imports are waiting; retry shortly.', { retryAfter: 5 })
    }
    const task: ImportCheckTask = { raw, contentType, streams, now }
    const result = await this.pool.run(task) as CheckedImport | ImportCheckRefusal
    if ('refusal' in result) {
      const { code, message, field, errors } = result.refusal
      throw new ApiError(code, message, { ...(field !== undefined ? { field } : {}), ...(errors !== undefined ? { errors } : {}) })
    }
    return result
  }

  /** Waits for the thread to finish loading (at most 5 s), then ends it. */
  async close (): Promise<void> {
    await this.pool.close()
  }
}
