import { esmEntry } from '../../stores/threads/thread_entry.cts'

/** The file a shard thread's pool loads: it imports worker.ts (see thread_entry.cts for why not directly). */
export = esmEntry(async () => await import('./worker.ts'))
