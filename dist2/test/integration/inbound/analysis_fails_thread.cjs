"use strict";
const node_fs_1 = require("node:fs");
const node_path_1 = require("node:path");
const thread_entry_cts_1 = require("../../../stores/threads/thread_entry.cjs");
/**
 * The analysis threads' entry (inbound/analysis_thread.cts), switched by files in OB_TEST_THREAD_DIR as a
 * thread starts or takes a task: with `broken` a thread cannot load it at all; with `die` a thread ends in the
 * middle of each batch it is given (the empty batch the pool runs before closing excepted); with `reject` every
 * message is answered as one that cannot be analysed (the thread itself works).
 */
const dir = process.env.OB_TEST_THREAD_DIR;
if ((0, node_fs_1.existsSync)((0, node_path_1.join)(dir, 'broken')))
    throw new Error('this analysis thread entry cannot be loaded');
const run = (0, thread_entry_cts_1.esmEntry)(async () => await import('../../../inbound/analysis_worker.js'));
module.exports = async (reqs) => {
    if (reqs.length > 0 && (0, node_fs_1.existsSync)((0, node_path_1.join)(dir, 'die'))) {
        await new Promise(() => { setImmediate(() => { throw new Error('this analysis thread ended in the middle of a task'); }); });
    }
    if ((0, node_fs_1.existsSync)((0, node_path_1.join)(dir, 'reject')))
        return reqs.map(() => ({ ok: false, error: 'this message cannot be analysed' }));
    return await run(reqs);
};
//# sourceMappingURL=analysis_fails_thread.cjs.map