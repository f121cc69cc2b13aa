/**
 * Work measured as CPU time of this process (every thread: the gateway, engine and inbound run in it), for
 * growth tests: the ratio between the work for inputs of size n and 8n tells linear (about 8) from quadratic
 * (about 64) on a noisy machine where an absolute time would not. Each figure is the least of `runs` runs, which
 * keeps the background work of the process (lease renewals, polls) out of it as far as possible.
 */
export async function cpuMs(work, runs = 3) {
    let least = Infinity;
    for (let i = 0; i < runs; i++) {
        const before = process.cpuUsage();
        await work();
        const used = process.cpuUsage(before);
        least = Math.min(least, (used.user + used.system) / 1000);
    }
    return least;
}
/** Adversarial HTML of about `n` elements in the shapes that make parsers work hardest. */
export const ADVERSARIAL_HTML = {
    nested: (n) => '<div>'.repeat(n),
    unclosed: (n) => '<p><b><i><span><table><td>'.repeat(Math.ceil(n / 6)),
    attributes: (n) => '<div ' + Array.from({ length: n }, (_, i) => `a${i}="x"`).join(' ') + '>text</div>'
};
//# sourceMappingURL=work.js.map