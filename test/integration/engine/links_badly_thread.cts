import { esmEntry } from '../../../stores/threads/thread_entry.cts'

/** A shard thread entry whose module fails to link (links_badly_module.ts). */
export = esmEntry(async () => await import('./links_badly_module.ts'))
