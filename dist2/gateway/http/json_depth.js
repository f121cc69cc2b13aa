/**
 * How deeply a request body may nest arrays and objects. No request of the API needs more than 5 levels; a 10 MB
 * body of nothing but `[` would otherwise keep the parser and the validator busy for seconds on the thread that
 * serves every request. Documented in docs/errors.md and docs/security.md.
 */
export const MAX_JSON_DEPTH = 32;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
/**
 * Whether JSON text nests arrays and objects deeper than `limit`, counting brackets outside strings. One pass over
 * the bytes before `JSON.parse`, stopping at the first bracket past the limit; strings are skipped with `indexOf`.
 * Malformed text is not judged here: the parser that runs next refuses it.
 */
export function nestsDeeperThan(raw, limit) {
    let depth = 0;
    for (let i = 0; i < raw.length; i++) {
        const b = raw[i];
        if (b === QUOTE) {
            // the closing quote is the next one not escaped by an odd run of backslashes before it
            for (;;) {
                const end = raw.indexOf(QUOTE, i + 1);
                if (end === -1)
                    return false;
                let slashes = 0;
                while (raw[end - 1 - slashes] === BACKSLASH)
                    slashes++;
                i = end;
                if (slashes % 2 === 0)
                    break;
            }
        }
        else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
            if (++depth > limit)
                return true;
        }
        else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
            depth--;
        }
    }
    return false;
}
//# sourceMappingURL=json_depth.js.map