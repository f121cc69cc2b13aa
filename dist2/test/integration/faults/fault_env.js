import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, fetch as undiciFetch } from 'undici';
import { STREAM_OUTBOUND, STREAM_WEBHOOK_JOBS } from '../../../protocol/mod.js';
import { SmtpSink } from '../../helpers/smtp_sink.js';
import { TestOutbox } from '../../helpers/outbox.js';
import { ServerProcess } from '../../helpers/servers.js';
/**
 * Shared pieces of the fault tests: HTTP sends that survive connection errors (recorded, not thrown), an
 * engine in a child process that can be SIGKILLed, and the end-of-test checks "everything accepted was
 * delivered" and "nothing is left pending in JetStream".
 */
export const ENGINE_CHILD = fileURLToPath(new URL('../../helpers/engine_child.js', import.meta.url));
const agent = new Agent({ keepAliveTimeout: 1000, connections: 32 });
export function sendBody(org, to, extra = {}) {
    return { from: `App <hello@${org.domain}>`, to, subject: 'Fault test', text: 'hello', track_opens: false, track_clicks: false, ...extra };
}
/** One POST /v1/messages/send; a connection error is status 0 with the error text, never a throw. */
export async function send(baseUrl, key, body, headers = {}) {
    const started = Date.now();
    try {
        const res = await undiciFetch(`${baseUrl}/v1/messages/send`, {
            method: 'POST',
            dispatcher: agent,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
            body: JSON.stringify(body),
            signal: AbortSignal.timeout(15_000)
        });
        const text = await res.text();
        let parsed;
        try {
            parsed = JSON.parse(text);
        }
        catch {
            parsed = undefined;
        }
        const id = parsed?.id;
        const code = parsed?.error?.code;
        return {
            status: res.status, ...(res.status === 202 && id !== undefined ? { id } : {}), ...(code !== undefined ? { code } : {}),
            retryAfter: res.headers.get('retry-after'), ms: Date.now() - started
        };
    }
    catch (err) {
        return { status: 0, error: String(err.cause ?? err), ms: Date.now() - started };
    }
}
/** Sends `count` messages, `concurrency` at a time; `to(i)` names the recipient of the i-th. */
export async function sendMany(baseUrl, key, org, count, to, concurrency = 8, pauseMs = 0) {
    const results = new Array(count);
    let next = 0;
    await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < count) {
            const i = next++;
            results[i] = await send(baseUrl, key, sendBody(org, to(i)));
            if (pauseMs > 0)
                await new Promise((resolve) => setTimeout(resolve, pauseMs));
        }
    }));
    return results;
}
/** Clients posting one send after another until `stop()`: the load the outage tests inject faults into. */
export function startSendLoad(baseUrl, key, org, prefix, senders = 4) {
    const results = [];
    let running = true;
    let n = 0;
    const loops = Array.from({ length: senders }, async () => {
        while (running) {
            results.push(await send(baseUrl, key, sendBody(org, `${prefix}${n++}@dest.example`)));
            await sleep(10);
        }
    });
    return { results, stop: async () => { running = false; await Promise.all(loops); } };
}
export function acceptedIds(results) {
    return results.filter((r) => r.status === 202 && r.id !== undefined).map((r) => r.id);
}
/** Message-ID at the sink → how many SMTP transactions carried it. */
export function sinkCounts(sink) {
    const counts = new Map();
    for (const m of sink.messages)
        counts.set(m.messageId, (counts.get(m.messageId) ?? 0) + 1);
    return counts;
}
export function messageIdHeader(org, id) {
    return `<${id}@${org.domain}>`;
}
/** Resolves once every id has reached the sink (by Message-ID). */
export async function untilDelivered(sink, org, ids, timeoutMs = 60_000) {
    const want = ids.map((id) => messageIdHeader(org, id));
    await sink.until(() => { const c = sinkCounts(sink); return want.every((w) => c.has(w)); }, timeoutMs);
}
/** What is left in OB_OUTBOUND (work queue: a finished message is gone) and in the webhook job stream. */
export async function pendingState(nc) {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(STREAM_OUTBOUND);
    const consumers = [];
    for await (const c of jsm.consumers.list(STREAM_OUTBOUND))
        consumers.push({ name: c.name, pending: c.num_pending, ackPending: c.num_ack_pending });
    let webhookJobs = 0;
    try {
        for await (const c of jsm.consumers.list(STREAM_WEBHOOK_JOBS))
            webhookJobs += c.num_pending + c.num_ack_pending;
    }
    catch { /* no webhook job stream yet: nothing can be pending there */ }
    return { outboundMessages: info.state.messages, consumers, webhookJobs };
}
/** No consumer holds or owes a message and no webhook job waits (messages may still be stored, see nats_restart). */
export function consumersIdle(s) {
    return s.webhookJobs === 0 && s.consumers.every((c) => c.pending === 0 && c.ackPending === 0);
}
export function nothingPending(s) {
    return s.outboundMessages === 0 && s.webhookJobs === 0 && s.consumers.every((c) => c.pending === 0 && c.ackPending === 0);
}
/** Polls until nothing is pending (engines ack just after their events), returning the last state seen. */
export async function untilNothingPending(natsUrl, timeoutMs = 20_000, done = nothingPending) {
    const nc = await connect({ servers: natsUrl });
    try {
        const deadline = Date.now() + timeoutMs;
        let s = await pendingState(nc);
        while (!done(s) && Date.now() < deadline) {
            await sleep(200);
            s = await pendingState(nc);
        }
        return s;
    }
    finally {
        await nc.close();
    }
}
export const sleep = async (ms) => { await new Promise((resolve) => setTimeout(resolve, ms)); };
/** An engine (OB_ROLE=engine) in its own process; resolves once it consumes. */
export async function startEngineChild(env) {
    const c = spawn(process.execPath, [ENGINE_CHILD], {
        env: { PATH: process.env.PATH, OB_ENGINE_ACK_WAIT_MS: '2000', OB_SHUTDOWN_TIMEOUT_MS: '2000', ...env },
        stdio: ['ignore', 'pipe', 'inherit']
    });
    await new Promise((resolve, reject) => {
        c.stdout.on('data', (b) => { if (b.toString().includes('ready'))
            resolve(); });
        c.once('exit', (code) => reject(new Error(`engine child exited with ${code}`)));
    });
    return c;
}
export async function killChild(c, signal = 'SIGKILL') {
    if (c.exitCode !== null || c.signalCode !== null)
        return c.exitCode;
    return await new Promise((resolve) => { c.once('exit', (code) => resolve(code)); c.kill(signal); });
}
export async function closeAgent() {
    await agent.close().catch(() => { });
}
/**
 * NATS and Redis of the test's own (so they can be killed), an SMTP sink, one Outbox running every part and
 * relaying to the sink, and a send key: the world of the outage tests. `env` adds the test's own settings.
 */
export async function startRelayWorld(env = {}) {
    const nats = await ServerProcess.nats();
    const redis = await ServerProcess.redis();
    const sink = await SmtpSink.start({ keepRaw: false });
    const ob = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'all', OB_SMTP_RELAY: sink.url, ...env } });
    const org = await ob.org();
    const key = await ob.key(org, ['send']);
    return {
        nats, redis, sink, ob, org, key,
        async close() {
            await ob.close();
            await closeAgent();
            await sink.close();
            await nats.dispose();
            await redis.dispose();
        }
    };
}
//# sourceMappingURL=fault_env.js.map