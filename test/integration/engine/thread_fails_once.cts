import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { esmEntry } from '../../../stores/threads/thread_entry.cts'

/**
 * A shard thread's entry whose module fails to load the first time (thread_fails_once_module.ts). Each task it
 * is given leaves a `task` file in OB_TEST_THREAD_DIR first, so that failure comes while a task is in the thread.
 */
const run = esmEntry(async () => await import('./thread_fails_once_module.ts'))

export = async (task: Parameters<typeof run>[0]): Promise<unknown> => {
  writeFileSync(join(process.env.OB_TEST_THREAD_DIR!, 'task'), '')
  return await run(task)
}
