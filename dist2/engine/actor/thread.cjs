"use strict";
const thread_entry_cts_1 = require("../../stores/threads/thread_entry.cjs");
module.exports = (0, thread_entry_cts_1.esmEntry)(async () => await import('./worker.js'));
//# sourceMappingURL=thread.cjs.map