"use strict";
const node_fs_1 = require("node:fs");
const node_path_1 = require("node:path");
const thread_entry_cts_1 = require("../../../stores/threads/thread_entry.cjs");
/**
 * A shard thread's entry whose module fails to load the first time (thread_fails_once_module.ts). Each task it
 * is given leaves a `task` file in OB_TEST_THREAD_DIR first, so that failure comes while a task is in the thread.
 */
const run = (0, thread_entry_cts_1.esmEntry)(async () => await import('./thread_fails_once_module.js'));
module.exports = async (task) => {
    (0, node_fs_1.writeFileSync)((0, node_path_1.join)(process.env.OB_TEST_THREAD_DIR, 'task'), '');
    return await run(task);
};
//# sourceMappingURL=thread_fails_once.cjs.map