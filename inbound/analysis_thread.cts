import { esmEntry } from '../stores/threads/thread_entry.cts'

/** The file an analysis thread's pool loads: it imports analysis_worker.ts (see thread_entry.cts for why not directly). */
export = esmEntry(async () => await import('./analysis_worker.ts'))
