/**
 * The one piscina wrapper every thread pool goes through: the engine's shard threads, the inbound analysis threads
 * and the gateway's content analysis. A thread's file is a CommonJS entry built with `esmEntry`
 * (thread_entry.cts, imported directly by those .cts files: a CommonJS file cannot load this ES module).
 */
export { ThreadPool } from './thread_pool.js';
export { reportThreadFailures, THREAD_FAILURE_LOG_MS } from './thread_failures.js';
//# sourceMappingURL=mod.js.map