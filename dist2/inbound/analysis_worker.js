import { hostname } from 'node:os';
import { workerData } from 'node:worker_threads';
import { analyzeMessage } from './analysis.js';
import { dnsResolver } from './authenticate.js';
/** Piscina entry: one resolver per thread, created once; tasks overlap while they wait on DNS. */
const resolver = dnsResolver(workerData?.dnsServers ?? []);
const mta = hostname();
/** A batch of messages, analysed concurrently; one failing message does not fail the others. */
export default async function run(reqs) {
    return await Promise.all(reqs.map(async (req) => {
        try {
            return { ok: true, analysis: await analyzeMessage(req, resolver, mta) };
        }
        catch (err) {
            return { ok: false, error: err.message };
        }
    }));
}
//# sourceMappingURL=analysis_worker.js.map