/**
 * The last check before any response header is written. uWS writes header names and values as they are given, so a
 * CR or LF that reached one would end that header and let the rest of the value be read as headers of its own, or
 * as a second response on the same connection (response splitting). NUL is refused too: parsers disagree on it.
 * Inputs are validated where they come in (tracked links, request ids); this guard holds whatever slips past them.
 */
const LINE_BREAK_OR_NUL = /[\r\n\0]/;
/** The name of the first header whose name or value holds CR, LF or NUL, or undefined when every one is safe. */
export function unsafeHeader(...sets) {
    for (const headers of sets) {
        if (headers === undefined)
            continue;
        for (const name in headers) {
            if (LINE_BREAK_OR_NUL.test(name) || LINE_BREAK_OR_NUL.test(headers[name]))
                return name;
        }
    }
    return undefined;
}
//# sourceMappingURL=header_guard.js.map