import { readdirSync, readFileSync } from 'node:fs';
/** Resident memory (MB) and open file descriptors of a process, from /proc; undefined once it is gone. */
export function processUsage(pid) {
    if (pid === undefined)
        return undefined;
    try {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8');
        const kb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? NaN);
        const fds = readdirSync(`/proc/${pid}/fd`).length;
        return { rssMb: Math.round(kb / 102.4) / 10, fds };
    }
    catch {
        return undefined;
    }
}
/** The p-th percentile (0..100) of `values` by nearest rank; 0 for none. */
export function percentile(values, p) {
    if (values.length === 0)
        return 0;
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
/** Latencies collected since the last `take()`, so each sample window gets its own p99. */
export class LatencyWindow {
    values = [];
    all = [];
    add(ms) { this.values.push(ms); this.all.push(ms); }
    take() {
        const v = this.values;
        this.values = [];
        return { count: v.length, p50: percentile(v, 50), p99: percentile(v, 99) };
    }
    overall() {
        return { count: this.all.length, p50: percentile(this.all, 50), p99: percentile(this.all, 99), max: this.all.reduce((a, b) => Math.max(a, b), 0) };
    }
}
//# sourceMappingURL=soak_probe.js.map