import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { esmEntry } from '../../../stores/threads/thread_entry.cts'
import type { AnalysisRequest } from '../../../inbound/analysis.ts'

/**
 * The analysis threads' entry (inbound/analysis_thread.cts), switched by files in OB_TEST_THREAD_DIR as a
 * thread starts or takes a task: with `broken` a thread cannot load it at all; with `die` a thread ends in the
 * middle of each batch it is given (the empty batch the pool runs before closing excepted); with `reject` every
 * message is answered as one that cannot be analysed (the thread itself works).
 */
const dir = process.env.OB_TEST_THREAD_DIR!
if (existsSync(join(dir, 'broken'))) throw new Error('this analysis thread entry cannot be loaded')

const run = esmEntry(async () => await import('../../../inbound/analysis_worker.ts'))

export = async (reqs: AnalysisRequest[]): Promise<unknown> => {
  if (reqs.length > 0 && existsSync(join(dir, 'die'))) {
    await new Promise(() => { setImmediate(() => { throw new Error('this analysis thread ended in the middle of a task') }) })
  }
  if (existsSync(join(dir, 'reject'))) return reqs.map(() => ({ ok: false, error: 'this message cannot be analysed' }))
  return await run(reqs)
}
