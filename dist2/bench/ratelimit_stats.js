export const TOLERANCE = 0.02;
export function expectedAllowed(limit, durationS) {
    return limit + limit * durationS / 60;
}
/** ±2 %, but never less than 2 requests: the first and last request of a window may fall either side of an emission. */
export function allowance(expected) {
    return Math.max(expected * TOLERANCE, 2);
}
/**
 * `over`: the key got more than its plan allows (the limit is not enforced). `starved`: it was driven well
 * above its limit yet got less than its share. `underdriven`: the client did not send enough to tell.
 */
export function judgeKey(t, minOffered = 1.3) {
    const durationS = Math.max(0, (t.lastAt - t.firstAt) / 1000);
    const expected = expectedAllowed(t.limit, durationS);
    const ratio = t.allowed / expected;
    const steadyPerMinute = durationS > 0 ? (t.allowed - t.limit) / durationS * 60 : 0;
    const offeredRatio = t.sent / expected;
    let verdict = 'ok';
    if (t.allowed > expected + allowance(expected))
        verdict = 'over';
    else if (offeredRatio < minOffered)
        verdict = 'underdriven';
    else if (t.allowed < expected - allowance(expected))
        verdict = 'starved';
    return { expected, ratio, steadyPerMinute, offeredRatio, verdict };
}
/** Smooth weighted round robin: each index appears `weights[i]` times per cycle, evenly spread. */
export function weightedSchedule(weights) {
    const total = weights.reduce((a, b) => a + b, 0);
    const current = weights.map(() => 0);
    const out = [];
    for (let n = 0; n < total; n++) {
        let best = 0;
        for (let i = 0; i < weights.length; i++) {
            current[i] += weights[i];
            if (current[i] > current[best])
                best = i;
        }
        current[best] -= total;
        out.push(best);
    }
    return out;
}
//# sourceMappingURL=ratelimit_stats.js.map