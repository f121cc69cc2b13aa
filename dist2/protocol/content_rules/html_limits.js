import { Parser } from 'htmlparser2';
export const HTML_LIMITS = Object.freeze({
    maxDepth: 512,
    maxElements: 50_000,
    maxAttributes: 1000,
    timeBudgetMs: 1000 // 1 s
});
const SLICE_CHARS = 16 * 1024;
/** Elements (or attributes) between two reads of the clock. */
const CLOCK_EVERY = 256;
/**
 * Runs htmlparser2 over `html` with the handler `build` returns (it receives the parser, for `startIndex` and
 * `endIndex`). Returns undefined when the whole document was parsed, else the limit that stopped it: no callback
 * runs after that point, `onend` included, and the caller decides what a partial parse is worth.
 */
export function parseHtmlWithin(html, build, options, limits = HTML_LIMITS) {
    const started = performance.now();
    let depth = 0;
    let elements = 0;
    let attributes = 0;
    let attributesHere = 0;
    let stopped;
    let cbs = {};
    const stop = (limit) => {
        stopped = limit;
        parser.pause();
    };
    const parser = new Parser({
        onopentagname(name) {
            if (stopped !== undefined)
                return;
            depth++;
            elements++;
            if (depth > limits.maxDepth)
                return stop('depth');
            if (elements > limits.maxElements)
                return stop('elements');
            if (elements % CLOCK_EVERY === 0 && performance.now() - started > limits.timeBudgetMs)
                return stop('time');
            attributesHere = 0;
            cbs.onopentagname?.(name);
        },
        onattribute(name, value, quote) {
            if (stopped !== undefined)
                return;
            if (++attributesHere > limits.maxAttributes)
                return stop('attributes');
            // A tag may still carry many attributes: the clock is read inside it too.
            if (++attributes % CLOCK_EVERY === 0 && performance.now() - started > limits.timeBudgetMs)
                return stop('time');
            cbs.onattribute?.(name, value, quote);
        },
        onopentag(name, attribs, isImplied) { if (stopped === undefined)
            cbs.onopentag?.(name, attribs, isImplied); },
        onclosetag(name, isImplied) {
            if (stopped !== undefined)
                return;
            depth--;
            cbs.onclosetag?.(name, isImplied);
        },
        ontext(data) { if (stopped === undefined)
            cbs.ontext?.(data); },
        onend() { if (stopped === undefined)
            cbs.onend?.(); }
    }, options);
    cbs = build(parser);
    for (let at = 0; at < html.length; at += SLICE_CHARS) {
        parser.write(html.slice(at, at + SLICE_CHARS));
        if (stopped !== undefined)
            return stopped;
        if (performance.now() - started > limits.timeBudgetMs)
            return 'time';
    }
    parser.end();
    return stopped;
}
//# sourceMappingURL=html_limits.js.map