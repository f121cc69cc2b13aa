import { sendMany, acceptedIds, untilDelivered } from '../test/integration/faults/fault_env.js';
/**
 * Delivered rate of healthy mail alone, then with mail to a destination that answers 451 to everything sent
 * at the same time. Both runs go through the HTTP API and the same engine; the rate counts from the first
 * send to the last healthy message at the sink. The baseline is the mean of a run before and one after the
 * mixed run, so a drift of the machine over time does not pass for an effect of the poison.
 */
export async function measurePoisonImpact(w, healthy, poison) {
    const org = { orgId: w.orgId, domainId: '', domain: w.domain, adminKey: w.key };
    const run = async (tag, withPoison) => {
        const t0 = Date.now();
        const [ok] = await Promise.all([
            sendMany(w.baseUrl, w.key, org, healthy, (i) => `${tag}${i}@healthy.example`, 6),
            withPoison ? sendMany(w.baseUrl, w.key, org, poison, (i) => `tempfail${tag}${i}@poison.example`, 2) : Promise.resolve([])
        ]);
        const ids = acceptedIds(ok);
        await untilDelivered(w.sink, org, ids, 120_000);
        return Math.round((ids.length / ((Date.now() - t0) / 1000)) * 10) / 10;
    };
    await run('warm', false); // connection pools, JIT and Redis scripts warmed up before anything is timed
    const before = await run('base', false);
    const withPoisonRate = await run('mixed', true);
    const after = await run('again', false);
    const baselineRate = Math.round(((before + after) / 2) * 10) / 10;
    const slowdownPct = Math.round((1 - withPoisonRate / baselineRate) * 1000) / 10;
    return { healthy, poison, baselineRate, withPoisonRate, slowdownPct };
}
//# sourceMappingURL=soak_poison.js.map