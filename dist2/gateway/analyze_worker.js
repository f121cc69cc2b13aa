// The content rules alone (their own folder and mod.ts): the thread does not load the rest of the protocol module.
import { analyzeContent } from '../protocol/content_rules/mod.js';
/** The task of a content analysis thread (analyze_thread.cts); `undefined` is the pool's close task. */
export default function run(input) {
    return input === undefined ? undefined : analyzeContent(input);
}
//# sourceMappingURL=analyze_worker.js.map