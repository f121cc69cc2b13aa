"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.esmEntry = esmEntry;
/**
 * The file piscina loads in a ThreadPool's thread is this CommonJS module, never an ES module itself: piscina loads
 * its file with require() and, when that throws, imports the same file again. On Node 20.19+ require() of an ES
 * module runs the ES module loader synchronously, and an ES module graph whose link step failed under require()
 * (a file read while `tsc` rewrote it, a missing export) cannot be imported again: Node stops on an internal
 * assertion ("Unexpected status of a module that is imported again after being required. Status = 0") and the
 * real error is lost. Loading the thread's ES module only with import(), here, leaves one way to load it, so a
 * failure is the module's own error. It works the same on every Node 20 release, with no Node flag
 * (`--no-experimental-require-module` for the threads would also do it, but only where that flag exists).
 *
 * A thread whose module fails to load rejects every task it was given with that error and then ends with it,
 * so the pool sees the failure and starts another thread. It ends after a pause: an installation whose files are
 * broken for good gets a failed thread a second, not a loop of them.
 */
const FAILED_THREAD_PAUSE_MS = 1_000;
function esmEntry(load) {
    const handler = load().then((m) => m.default);
    handler.catch((err) => {
        setTimeout(() => { throw err; }, FAILED_THREAD_PAUSE_MS);
    });
    return async (task) => await (await handler)(task);
}
//# sourceMappingURL=thread_entry.cjs.map