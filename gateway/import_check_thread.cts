import { esmEntry } from '../stores/threads/thread_entry.cts'

/** The file an import-check thread loads: it imports import_check_worker.ts (see thread_entry.cts for why not directly). */
export = esmEntry(async () => await import('./import_check_worker.ts'))
