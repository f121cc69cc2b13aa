/** The documented bound: a message is readable through GET /v1/messages/{id} within 1 s (p99) of its 202. */
export const READ_AFTER_WRITE_MS = 1000; // 1 s
const POLL_MS = 20;
/**
 * GET /v1/messages/{id} right after a send: a 404 may precede the message becoming readable, so it is asked
 * again until it is not 404 or `withinMs` (the documented second) has passed. Returns the last answer.
 */
export async function readMessage(ob, id, key, withinMs = READ_AFTER_WRITE_MS) {
    const deadline = Date.now() + withinMs;
    for (;;) {
        const r = await ob.request('GET', `/v1/messages/${id}`, { key });
        if (r.status !== 404 || Date.now() >= deadline)
            return r;
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
}
//# sourceMappingURL=read_after_write.js.map