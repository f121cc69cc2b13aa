import { percentile } from './soak_probe.js';
/** A scrape with no answer in this long counts as failed (Prometheus's default scrape timeout). */
const SCRAPE_TIMEOUT_MS = 10_000;
/** The `--scrape-ms` argument: undefined when absent; a positive integer, else an error naming it. */
export function scrapeMsArg(args) {
    const v = args['scrape-ms'];
    if (v === undefined)
        return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0)
        throw new Error(`--scrape-ms must be a positive whole number of milliseconds, not ${JSON.stringify(v)}`);
    return n;
}
/** Scrapes every target every `everyMs` until stopped; `stop` (once or more) waits for the scrapes in flight and resolves to the counts. */
export function scrapeLoop(targets, everyMs) {
    let running = true;
    let wake = () => { };
    const stopped = new Promise((resolve) => { wake = resolve; });
    const one = async (t) => {
        const times = [];
        const count = { name: t.name, url: t.url, scrapes: 0, failed: 0, p50Ms: 0, maxMs: 0 };
        while (running) {
            const t0 = performance.now();
            try {
                const res = await fetch(t.url, { signal: AbortSignal.timeout(SCRAPE_TIMEOUT_MS) });
                await res.arrayBuffer();
                if (res.status !== 200)
                    throw new Error(`answered ${res.status}`);
                count.scrapes++;
                times.push(performance.now() - t0);
            }
            catch (err) {
                count.failed++;
                count.firstError ??= err.message;
            }
            const wait = everyMs - (performance.now() - t0);
            if (wait > 0 && running) {
                let timer;
                await Promise.race([stopped, new Promise((resolve) => { timer = setTimeout(resolve, wait); })]);
                clearTimeout(timer);
            }
        }
        const round = (ms) => Math.round(ms * 10) / 10;
        return { ...count, p50Ms: round(percentile(times, 50)), maxMs: round(times.reduce((m, v) => Math.max(m, v), 0)) };
    };
    const loops = Promise.all(targets.map(one));
    return { stop: async () => { running = false; wake(); return await loops; } };
}
//# sourceMappingURL=scrape.js.map