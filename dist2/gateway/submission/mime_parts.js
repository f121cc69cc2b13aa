import mailsplit from '@zone-eu/mailsplit';
import { contentRefused } from './mime.js';
/**
 * MIME parts (nodes, the message itself included) a submitted message may have: the bound of the MIME parser the
 * content view reads submissions with (mailsplit's own default), so every accepted message can be shown by
 * GET /v1/messages/{id}/content. Mail with more parts than this is not mail people write.
 */
export const MAX_MIME_PARTS = 1000;
const DASHES = Buffer.from('\n--');
// Every message/rfc822 part names "rfc822" in its Content-Type, and digits have no case.
const EMBEDDED = Buffer.from('822');
function occurrences(data, needle, stopAt) {
    let n = 0;
    for (let i = data.indexOf(needle); i !== -1 && n <= stopAt; i = data.indexOf(needle, i + needle.length))
        n++;
    return n;
}
/**
 * Whether the message has more parts than the parser takes. Every part after the first starts at a boundary line
 * (`--…`) or is an embedded message, so when those are few (almost always) the answer is known from two scans of
 * the bytes; only a message that could be over is parsed, with the parser's own rules.
 */
async function overPartLimit(data) {
    const bound = 1 + occurrences(data, DASHES, MAX_MIME_PARTS) + occurrences(data, EMBEDDED, MAX_MIME_PARTS);
    if (bound <= MAX_MIME_PARTS)
        return false;
    const splitter = new mailsplit.Splitter({ maxChildNodes: MAX_MIME_PARTS });
    const stream = splitter;
    return await new Promise((resolve) => {
        stream.on('data', () => { });
        stream.once('error', () => resolve(stream.nodeCounter > MAX_MIME_PARTS));
        stream.once('end', () => resolve(false));
        stream.end(data);
    });
}
/** Refuses (554 5.6.0) a message of more than MAX_MIME_PARTS parts, before it is queued. */
export async function assertPartCount(data) {
    if (await overPartLimit(data)) {
        throw contentRefused(`Message has more than ${MAX_MIME_PARTS} MIME parts; send fewer parts (attach files as an archive)`);
    }
}
//# sourceMappingURL=mime_parts.js.map