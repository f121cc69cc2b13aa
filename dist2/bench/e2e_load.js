import { Pool } from 'undici';
import { percentile } from './soak_probe.js';
export async function sendLoad(baseUrl, key, body, plan, progress = () => { }) {
    const pool = new Pool(baseUrl, { connections: plan.concurrency, pipelining: 1, keepAliveTimeout: 30_000 });
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const accepted = [];
    const statuses = new Map();
    const latencies = [];
    const startedAt = Date.now();
    let firstAcceptAt = 0;
    let lastAcceptAt = 0;
    let next = 0;
    const sender = async () => {
        while (next < plan.count) {
            const i = next++;
            if (plan.ratePerS !== undefined) {
                const wait = startedAt + (i * 1000) / plan.ratePerS - Date.now();
                if (wait > 0)
                    await new Promise((resolve) => setTimeout(resolve, wait));
            }
            const sentAt = Date.now();
            const t0 = performance.now();
            let status = 0;
            try {
                const res = await pool.request({ path: '/v1/messages/send', method: 'POST', headers, body: body(i, sentAt), headersTimeout: 30_000, bodyTimeout: 30_000 });
                const text = await res.body.text();
                status = res.statusCode;
                if (status === 202) {
                    const now = Date.now();
                    accepted.push({ id: JSON.parse(text).id, sentAt });
                    if (firstAcceptAt === 0)
                        firstAcceptAt = now;
                    lastAcceptAt = now;
                }
            }
            catch {
                status = 0;
            }
            latencies.push(performance.now() - t0);
            statuses.set(status, (statuses.get(status) ?? 0) + 1);
            if ((i & 255) === 0)
                progress(i);
        }
    };
    try {
        await Promise.all(Array.from({ length: plan.concurrency }, sender));
    }
    finally {
        await pool.close();
    }
    const round = (ms) => Math.round(ms * 10) / 10;
    return {
        accepted,
        statuses,
        latency: { p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)), max: round(latencies.reduce((m, v) => Math.max(m, v), 0)) },
        startedAt,
        firstAcceptAt,
        lastAcceptAt,
        acceptedPerS: Math.round(accepted.length / Math.max(0.001, (Math.max(lastAcceptAt, startedAt + 1) - startedAt) / 1000))
    };
}
//# sourceMappingURL=e2e_load.js.map