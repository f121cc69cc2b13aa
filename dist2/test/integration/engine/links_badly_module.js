// @ts-expect-error the export is missing on purpose: this module fails to link, as one read mid-rewrite does
import { notExported } from '../../../stores/threads/thread_failures.js';
/** A shard thread module that cannot link: a name it imports is not exported. */
export default async function actor() { return notExported; }
//# sourceMappingURL=links_badly_module.js.map