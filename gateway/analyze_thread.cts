import { esmEntry } from '../stores/threads/thread_entry.cts'

/** The file a content analysis thread loads: it imports analyze_worker.ts (see thread_entry.cts for why not directly). */
export = esmEntry(async () => await import('./analyze_worker.ts'))
