import { isQueuedMessage, queuedMessageProblem } from '../protocol/mod.js';
const dec = new TextDecoder();
/**
 * A stream message as a QueuedMessage, or why it cannot be one: not JSON, or the first place where it departs
 * from the schema (`/to/0 must match pattern ...`). Nothing reads a field of a message before this.
 */
export function decodeQueued(data) {
    let value;
    try {
        value = JSON.parse(dec.decode(data));
    }
    catch (err) {
        return err.message;
    }
    return isQueuedMessage(value) ? value : queuedMessageProblem(value);
}
//# sourceMappingURL=queued_ingress.js.map