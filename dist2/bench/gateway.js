/**
 * Throughput and latency of POST /v1/messages/send through the whole Outbox gateway, next to a bare
 * uWebSockets.js server that only parses the JSON body and a Fastify server doing the same send path.
 *
 *   node dist/bench/gateway.js            ~10 s per measurement; prints the JSON result and a markdown table
 *   node dist/bench/gateway.js --quick    ~2 s per measurement
 *   npm run bench -- gateway              the same measurements, recorded in bench/results/gateway.json
 *
 * Every server under test runs in its own child process; autocannon runs in this one; NATS and Redis are
 * spawned for the run. Nothing outside loopback is touched.
 */
import { spawn, execFileSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { STREAM_OUTBOUND } from '../protocol/mod.js';
import { ServerProcess } from '../test/helpers/servers.js';
import { serve } from './gateway_targets.js';
import { scrapeLoop } from './scrape.js';
const TARGETS = ['bare', 'fastify-bare', 'floor', 'fastify', 'full'];
/** Those the ratios need; `fastify-bare` shows what the HTTP layer alone costs, `floor` what two round trips cost. */
const RATIO_TARGETS = ['bare', 'fastify', 'full'];
async function startChild(target, natsUrl, redisUrl) {
    // BENCH_NODE_ARGS (e.g. "--cpu-prof") goes to the server processes only, for profiling them.
    const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
    const proc = spawn(process.execPath, [...nodeArgs, fileURLToPath(import.meta.url), '--serve', target], {
        env: { ...process.env, BENCH_NATS_URL: natsUrl, BENCH_REDIS_URL: redisUrl },
        stdio: ['ignore', 'pipe', 'inherit']
    });
    const line = await new Promise((resolve, reject) => {
        const rl = createInterface({ input: proc.stdout });
        rl.once('line', (l) => { rl.close(); resolve(l); });
        proc.once('exit', (code) => reject(new Error(`${target} server exited with ${code}`)));
    });
    const { port, key, domain } = JSON.parse(line);
    return { proc, port, key, domain };
}
async function stopChild(c) {
    if (c.proc.exitCode !== null)
        return;
    await new Promise((resolve) => {
        c.proc.once('exit', () => resolve());
        c.proc.kill('SIGTERM');
    });
}
function sendBody(domain) {
    return JSON.stringify({
        from: `Acme <orders@${domain}>`,
        to: 'customer@example.net',
        subject: 'Your order #10234 has shipped',
        html: '<p>Hello Ann,</p><p>Your order <b>#10234</b> is on its way. Track it <a href="https://example.net/t/10234">here</a>.</p>',
        text: 'Hello Ann, your order #10234 is on its way: https://example.net/t/10234',
        metadata: { order_id: '10234', customer_id: 'c_8812' }
    });
}
let loadRun = 0;
/**
 * With `keyed`, every request carries its own Idempotency-Key, as a careful client sends them, so the whole path
 * runs (claim, publish, stored response). The load generator then builds each request anew, which costs it more.
 */
async function load(c, connections, durationS, keyed) {
    const headers = { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' };
    const url = `http://127.0.0.1:${c.port}/v1/messages/send`;
    if (!keyed)
        return await autocannon({ url, method: 'POST', connections, duration: durationS, headers, body: sendBody(c.domain) });
    const prefix = `bench-${process.pid}-${++loadRun}-`;
    let n = 0;
    return await autocannon({
        url,
        connections,
        duration: durationS,
        requests: [{
                method: 'POST',
                body: sendBody(c.domain),
                setupRequest: (req) => ({ ...req, headers: { ...headers, 'idempotency-key': prefix + String(n++) } })
            }]
    });
}
/** Load average and the busiest processes before the run, so a reader can judge the figures. */
function environmentNote() {
    let busiest = [];
    let loadAvg = '';
    try {
        loadAvg = readFileSync('/proc/loadavg', 'utf8').trim();
        busiest = execFileSync('ps', ['-eo', 'pcpu,args', '--sort=-pcpu'], { encoding: 'utf8' }).split('\n').slice(1, 7).map((l) => l.trim().slice(0, 110)).filter(Boolean);
    }
    catch { }
    return { cpus: cpus().length, node: process.version, load_average_before: loadAvg, busiest_other_processes: busiest };
}
/** utime + stime of a process in clock ticks (100 per second on Linux). */
function cpuTicks(pid) {
    if (pid === undefined)
        return 0;
    try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        return Number(fields[11]) + Number(fields[12]);
    }
    catch {
        return 0;
    }
}
function pidOf(s) {
    return s.child?.pid;
}
function round(n, digits = 2) {
    const f = 10 ** digits;
    return Math.round(n * f) / f;
}
export async function runGatewayBench(opts = {}) {
    const log = opts.log ?? ((l) => process.stderr.write(l + '\n'));
    const durationS = opts.durationS ?? (opts.quick === true ? 2 : 10);
    const connectionCounts = opts.connections ?? [100, 10];
    const keyedConnections = opts.keyedConnections ?? (opts.quick === true ? [] : [100]);
    const machine = environmentNote();
    const nats = await ServerProcess.nats();
    const redis = await ServerProcess.redis();
    const nc = await connect({ servers: nats.url });
    const measurements = [];
    const children = new Map();
    try {
        // All servers start first and the measurements alternate between them, so that whatever else shares the
        // machine weighs on each of them alike and the ratios stay fair.
        const targets = opts.targets ?? TARGETS;
        const started = await Promise.all(targets.map(async (target) => await startChild(target, nats.url, redis.url)));
        targets.forEach((target, i) => children.set(target, started[i]));
        const plan = [];
        for (const connections of connectionCounts) {
            for (const target of targets) {
                plan.push({ target, connections, keyed: false });
                if (target === 'full' && opts.scrapeMs !== undefined)
                    plan.push({ target, connections, keyed: false, scrapeMs: opts.scrapeMs });
            }
        }
        for (const connections of keyedConnections) {
            for (const target of targets)
                if (target === 'full' || target === 'fastify')
                    plan.push({ target, connections, keyed: true });
        }
        for (const { target, connections, keyed, scrapeMs } of plan) {
            const child = children.get(target);
            await load(child, connections, Math.max(0.5, Math.round(durationS / 4)), keyed); // warm-up: JIT, connection pools
            if (target === 'full' || target === 'fastify' || target === 'floor')
                await (await jetstreamManager(nc)).streams.purge(STREAM_OUTBOUND);
            const pids = { server: child.proc.pid, nats: pidOf(nats), redis: pidOf(redis), load_generator: process.pid };
            const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuTicks(pid)]));
            const started = performance.now();
            const scraping = scrapeMs !== undefined ? scrapeLoop([{ name: 'Outbox gateway', url: `http://127.0.0.1:${child.port}/metrics` }], scrapeMs) : undefined;
            const r = await load(child, connections, durationS, keyed);
            const scraped = (await scraping?.stop())?.[0];
            if (scraped !== undefined && scraped.failed > 0)
                throw new Error(`GET /metrics failed ${scraped.failed} time(s): ${scraped.firstError ?? ''}`);
            const scrapes = scraped?.scrapes;
            const elapsedS = (performance.now() - started) / 1000;
            const cpu = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, round((cpuTicks(pid) - before[k]) / elapsedS, 0)]));
            const m = {
                target,
                connections,
                idempotency_key: keyed,
                requests_per_s: round(r.requests.average, 0),
                latency_p50_ms: r.latency.p50,
                latency_p99_ms: r.latency.p99,
                requests: r.requests.total,
                non_2xx: r.non2xx,
                errors: r.errors + r.timeouts,
                server_cpu_us_per_request: round(cpu.server * 10_000 / Math.max(1, r.requests.average), 0),
                cpu_pct: cpu,
                ...(scrapeMs !== undefined ? { scrape_every_ms: scrapeMs } : {})
            };
            measurements.push(m);
            log(`${target.padEnd(7)} c=${String(connections).padEnd(3)}${keyed ? ' +key' : ''}${scrapes !== undefined ? ` +${scrapes} scrapes of /metrics` : ''} ${String(m.requests_per_s).padStart(7)} req/s  p50 ${m.latency_p50_ms} ms  p99 ${m.latency_p99_ms} ms  non-2xx ${m.non_2xx}  errors ${m.errors}  server ${m.server_cpu_us_per_request} µs CPU/req  cpu% server ${cpu.server} nats ${cpu.nats} redis ${cpu.redis} autocannon ${cpu.load_generator}`);
        }
    }
    finally {
        for (const child of children.values())
            await stopChild(child);
        await nc.close();
        await nats.dispose();
        await redis.dispose();
    }
    try {
        machine.load_average_after = readFileSync('/proc/loadavg', 'utf8').trim();
    }
    catch { }
    const get = (t, c, keyed = false) => measurements.find((m) => m.target === t && m.connections === c && m.idempotency_key === keyed && m.scrape_every_ms === undefined);
    const complete = RATIO_TARGETS.every((t) => connectionCounts.every((c) => get(t, c) !== undefined));
    const ratios = !complete ? [] : connectionCounts.map((c) => ({
        connections: c,
        full_over_bare: round(get('full', c).requests_per_s / get('bare', c).requests_per_s),
        full_over_fastify: round(get('full', c).requests_per_s / get('fastify', c).requests_per_s),
        ...(get('floor', c) !== undefined
            ? { floor_over_bare: round(get('floor', c).requests_per_s / get('bare', c).requests_per_s), full_over_floor: round(get('full', c).requests_per_s / get('floor', c).requests_per_s) }
            : {})
    }));
    const keyedRatios = keyedConnections.filter((c) => get('full', c, true) !== undefined && get('fastify', c, true) !== undefined)
        .map((c) => ({ connections: c, full_over_fastify: round(get('full', c, true).requests_per_s / get('fastify', c, true).requests_per_s) }));
    const at100 = ratios.find((r) => r.connections === 100) ?? ratios[0] ?? { full_over_bare: 0, full_over_fastify: 0 };
    const result = {
        benchmark: 'gateway',
        date: new Date().toISOString(),
        duration_s: durationS,
        machine,
        measurements,
        ratios,
        keyed_ratios: keyedRatios,
        targets: {
            full_ge_25pct_of_bare: at100.full_over_bare >= 0.25,
            full_ge_1_5x_fastify: at100.full_over_fastify >= 1.5,
            full_p99_lt_25ms_at_100: (get('full', 100)?.latency_p99_ms ?? Infinity) < 25
        }
    };
    if (opts.out !== undefined && opts.out !== false) {
        mkdirSync(dirname(opts.out), { recursive: true });
        writeFileSync(opts.out, JSON.stringify(result, null, 2) + '\n');
    }
    return result;
}
export function markdownTable(r) {
    const rows = ['| server | connections | Idempotency-Key | req/s | p50 ms | p99 ms | non-2xx | server CPU µs/req | CPU % server / nats / redis / autocannon |', '|---|---:|---|---:|---:|---:|---:|---:|---|'];
    for (const m of r.measurements)
        rows.push(`| ${m.target} | ${m.connections} | ${m.idempotency_key ? 'fresh per request' : 'none'} | ${m.requests_per_s} | ${m.latency_p50_ms} | ${m.latency_p99_ms} | ${m.non_2xx + m.errors} | ${m.server_cpu_us_per_request} | ${m.cpu_pct.server} / ${m.cpu_pct.nats} / ${m.cpu_pct.redis} / ${m.cpu_pct.load_generator} |`);
    rows.push('', '| connections | full / bare | full / fastify | floor / bare | full / floor |', '|---:|---:|---:|---:|---:|');
    for (const x of r.ratios)
        rows.push(`| ${x.connections} | ${x.full_over_bare} | ${x.full_over_fastify} | ${x.floor_over_bare ?? ''} | ${x.full_over_floor ?? ''} |`);
    for (const x of r.keyed_ratios)
        rows.push(`| ${x.connections}, with Idempotency-Key | | ${x.full_over_fastify} | | |`);
    return rows.join('\n');
}
const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
    const serveAt = process.argv.indexOf('--serve');
    if (serveAt !== -1) {
        await serve(process.argv[serveAt + 1], process.env.BENCH_NATS_URL, process.env.BENCH_REDIS_URL);
    }
    else {
        const only = process.argv.find((a) => a.startsWith('--targets='))?.slice('--targets='.length).split(',');
        const result = await runGatewayBench({ quick: process.argv.includes('--quick'), ...(only !== undefined ? { targets: only } : {}) });
        process.stdout.write(JSON.stringify(result, null, 2) + '\n\n' + markdownTable(result) + '\n');
        process.stdout.write(`\nAlso running: load average ${result.machine.load_average_before} before, ${result.machine.load_average_after ?? '?'} after (${result.machine.cpus} cores); busiest processes at the start:\n  ${result.machine.busiest_other_processes.join('\n  ')}\n`);
    }
}
//# sourceMappingURL=gateway.js.map