import { STATUS_CODES } from 'node:http';
const cache = new Map();
/** uWS wants the whole status line ("202 Accepted"); build each one once. */
export function statusLine(status) {
    let line = cache.get(status);
    if (line === undefined) {
        line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
        cache.set(status, line);
    }
    return line;
}
//# sourceMappingURL=status_text.js.map