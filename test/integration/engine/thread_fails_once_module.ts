import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { eventually } from '../../helpers/waiting.ts'

/**
 * The shard thread's real module (engine/actor/worker.ts), except that the first thread to load it in
 * OB_TEST_THREAD_DIR fails to load: it waits until a task reached the thread, then throws.
 */
const dir = process.env.OB_TEST_THREAD_DIR!
if (!existsSync(join(dir, 'failed'))) {
  writeFileSync(join(dir, 'failed'), '')
  await eventually(() => existsSync(join(dir, 'task')), 'a task to reach the thread', 60_000, 20)
  throw new Error('this shard thread cannot load its module')
}

const { default: actor } = await import('../../../engine/actor/worker.ts')
export default actor
