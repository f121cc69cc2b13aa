"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
/** A shard thread entry that cannot even be required: every thread started on it fails before it is ready. */
throw new Error('this shard thread entry cannot be loaded');
//# sourceMappingURL=never_loads_thread.cjs.map