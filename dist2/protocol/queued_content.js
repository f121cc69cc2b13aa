import { createHash } from 'node:crypto';
/**
 * Large queued messages: their content (`html`, `text`, `attachments`, `submitted`) leaves the stream message for
 * an object of its own, and the stream message carries a `content_ref` instead. A stock nats-server accepts
 * messages of at most 1 MB (`max_payload`); the object store cuts an object into chunks far below that, so a
 * message up to the documented 10 MB is queued on any NATS. Pure: the gateway and the engine store and read the
 * object through stores/content.
 */
/** Encoded messages larger than this always move their content out, whatever the server accepts. */
export const CONTENT_INLINE_MAX_BYTES = 512 * 1024;
/** The largest encoded message kept whole on a server whose `max_payload` is `maxPayload`. */
export function inlineLimit(maxPayload) {
    return Math.min(Math.floor(maxPayload / 2), CONTENT_INLINE_MAX_BYTES);
}
/** Moves the content of `msg` to an object of its own. */
export function splitContent(msg) {
    const { html, text, attachments, submitted, ...rest } = msg;
    const stored = { attachments };
    if (html !== undefined)
        stored.html = html;
    if (text !== undefined)
        stored.text = text;
    if (submitted !== undefined)
        stored.submitted = submitted;
    const content = Buffer.from(JSON.stringify(stored));
    const sha256 = createHash('sha256').update(content).digest('base64url');
    const message = Buffer.from(JSON.stringify({ ...rest, attachments: [], content_ref: { size: content.length, sha256 } }));
    return { message, content };
}
/** A stored object does not match the reference its message carries (size or digest). */
export class ContentMismatchError extends Error {
    code = 'content_mismatch';
    constructor(id) {
        super(`the stored content of ${id} does not match its reference`);
        this.name = 'ContentMismatchError';
    }
}
/**
 * The whole message again: `msg` (which has a `content_ref`) with the content read from its object. The result is
 * decoded against the schema by the caller, as any stream message is; the reference stays, so the message is
 * still known to have stored content.
 */
export function joinContent(msg, content) {
    const ref = msg.content_ref;
    const digest = createHash('sha256').update(content).digest('base64url');
    if (content.byteLength !== ref.size || digest !== ref.sha256)
        throw new ContentMismatchError(msg.id);
    const stored = JSON.parse(Buffer.from(content.buffer, content.byteOffset, content.byteLength).toString('utf8'));
    const joined = { ...msg, attachments: stored.attachments };
    if (stored.html !== undefined)
        joined.html = stored.html;
    if (stored.text !== undefined)
        joined.text = stored.text;
    if (stored.submitted !== undefined)
        joined.submitted = stored.submitted;
    return joined;
}
//# sourceMappingURL=queued_content.js.map