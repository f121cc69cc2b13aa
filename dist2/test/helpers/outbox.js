import { pino } from 'pino';
import { Agent, fetch as undiciFetch } from 'undici';
import { loadConfig } from '../../config/mod.js';
import { startOutbox } from '../../cli/outbox_process.js';
import { createOrganization, buildApiKey } from '../../gateway/control/orgs.js';
import { ServerProcess } from './servers.js';
let counter = 0;
/**
 * An Outbox process on its own NATS and Redis (spawned for the test file), serving HTTP on a free port.
 * `env` overrides settings exactly as the environment would.
 */
export class TestOutbox {
    proc;
    nats;
    redisServer;
    ownServers;
    // Its own agent, so keep-alive sockets close with the test instead of holding the process for seconds.
    agent = new Agent({ keepAliveTimeout: 1000 });
    constructor(proc, nats, redisServer, ownServers) {
        this.proc = proc;
        this.nats = nats;
        this.redisServer = redisServer;
        this.ownServers = ownServers;
    }
    /**
     * `log` captures the process's pino output at the given level (default: OB_TEST_LOG, else silent, to stdout).
     * `shardThreadEntry` is the file the engine's shard threads load instead of engine/actor/thread.cts; `inbound`
     * changes the inbound part (the file its analysis threads load, its retry delays).
     */
    static async start(opts = {}) {
        const nats = opts.nats ?? await ServerProcess.nats();
        const redis = opts.redis ?? await ServerProcess.redis();
        const config = loadConfig({
            NATS_URL: nats.url,
            REDIS_URL: redis.url,
            OB_HTTP_PORT: '0',
            OB_SMTP_INBOUND_PORT: '0',
            OB_SMTP_SUBMISSION_PORT: '0',
            OB_METRICS_PORT: '0',
            OB_DOMAIN_VERIFICATION: 'off',
            OB_SHUTDOWN_TIMEOUT_MS: '2000',
            ...opts.env
        });
        const log = opts.log !== undefined ? pino({ level: opts.log.level }, opts.log.stream) : pino({ level: process.env.OB_TEST_LOG ?? 'silent' });
        const proc = await startOutbox(config, log, {
            ...(opts.shardThreadEntry !== undefined ? { shardThreadEntry: opts.shardThreadEntry } : {}),
            ...(opts.inbound !== undefined ? { inbound: opts.inbound } : {})
        });
        return new TestOutbox(proc, nats, redis, opts.nats === undefined);
    }
    get baseUrl() {
        return `http://127.0.0.1:${this.proc.gateway.port}`;
    }
    /** A fresh organisation with a verified domain and an admin key. */
    async org(plan = 'pro') {
        const domain = `org${process.pid}x${++counter}.test`;
        const created = await createOrganization(this.proc.cp, this.proc.config, { name: domain, domain, plan });
        return { orgId: created.organization_id, domainId: created.domain_id, domain, adminKey: created.api_key };
    }
    /** A key with exactly these permissions on the org's domain, written straight to the control plane. */
    async key(org, permissions, environment = 'live') {
        const k = buildApiKey({ orgId: org.orgId, domainId: org.domainId, name: 'test', permissions, environment });
        await this.proc.cp.apiKeys.put(k.record.id, k.record);
        return k.value;
    }
    async request(method, path, opts = {}) {
        const headers = { ...opts.headers };
        if (opts.key !== undefined)
            headers.authorization = `Bearer ${opts.key}`;
        let body = opts.rawBody;
        if (opts.body !== undefined) {
            body = JSON.stringify(opts.body);
            headers['content-type'] ??= 'application/json';
        }
        const res = await undiciFetch(this.baseUrl + path, { method, headers, dispatcher: this.agent, ...(body !== undefined ? { body } : {}) });
        const text = await res.text();
        let parsed;
        try {
            parsed = text === '' ? undefined : JSON.parse(text);
        }
        catch {
            parsed = undefined;
        }
        return { status: res.status, headers: res.headers, body: parsed, text };
    }
    async close() {
        await this.proc.stop();
        await this.agent.close().catch(() => { });
        if (this.ownServers) {
            await this.nats.dispose();
            await this.redisServer.dispose();
        }
    }
}
//# sourceMappingURL=outbox.js.map