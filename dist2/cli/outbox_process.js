import { describeRedisTarget } from '../config/mod.js';
import { ControlPlane } from '../stores/control_plane/mod.js';
import { startProjector } from '../stores/read_model/mod.js';
import { connectNats, connectRedis, redisReady, ensureStreams, assertNoEviction, EvictionPolicyWatch } from '../stores/clients/mod.js';
import { startGateway } from '../gateway/main.js';
import { bootstrap } from '../gateway/control/orgs.js';
import { startEngine } from '../engine/main.js';
/** A server URL without its password, for messages and logs. */
function redact(url) {
    try {
        const u = new URL(url);
        if (u.password !== '')
            u.password = '***';
        return u.toString().replace(/\/$/, '');
    }
    catch {
        return url;
    }
}
import { startWebhookDelivery } from '../webhooks/mod.js';
import { startInbound } from '../inbound/mod.js';
import { OutboxMetrics, ConsumerPoller, startMetricsServer } from '../stores/metrics/mod.js';
import { jetStreamSettings, jetStreamTable, streamSettings, tablePart } from '../protocol/mod.js';
/**
 * Starts the parts `config.role` names, sharing one NATS and one Redis connection between them.
 * `shardThreadEntry` replaces the file the engine's shard threads load (see ShardActors), `inbound` what the
 * inbound part lets tests change; only tests set them.
 */
export async function startOutbox(config, log, opts = {}) {
    const nc = await connectNats(config.nats.servers, `outbox-${config.role}`).catch((err) => {
        throw new Error(`no NATS server answers at ${config.nats.servers.map(redact).join(',')} (${err.message}); start one or set NATS_URL`);
    });
    const redis = connectRedis(config.redis.target, `outbox-${config.role}`);
    // ioredis reports every failed reconnect; one line per outage is enough, and /readyz tells the rest.
    let redisDown = false;
    redis.on('error', (err) => {
        if (!redisDown)
            log.warn({ err: err.message }, 'Redis connection lost; retrying');
        redisDown = true;
    });
    redis.on('ready', () => { if (redisDown)
        log.info('Redis connection restored'); redisDown = false; });
    await redisReady(redis).catch(async (err) => {
        redis.disconnect();
        await nc.close();
        throw new Error(`no Redis answers at ${describeRedisTarget(config.redis.target)} (${err.message}); start one or set REDIS_URL`);
    });
    // An evicting Redis drops idempotency keys and schedule state when it is full: refuse it, as job queues do.
    await assertNoEviction(redis, describeRedisTarget(config.redis.target)).catch(async (err) => {
        redis.disconnect();
        await nc.close();
        throw err;
    });
    // A request that times out here (a busy or still-forming cluster) fails the start; nothing is left open.
    let cp;
    let bootstrapped;
    try {
        await ensureStreams(nc, streamSettings(config));
        cp = await ControlPlane.open(nc, { replicas: config.nats.replicas, storeBytes: config.nats.storeBytes });
        bootstrapped = await bootstrap(cp, config);
    }
    catch (err) {
        cp?.close();
        await nc.close().catch(() => { });
        await closeRedis(redis);
        throw err;
    }
    logBootstrap(log, bootstrapped);
    const metrics = new OutboxMetrics();
    const shared = { nc, redis, cp, log, metrics };
    const runs = (part) => config.role === 'all' || config.role === part;
    watchConnections(metrics, nc, redis, ['gateway', 'engine', 'inbound'].filter(runs));
    const evictionPolicy = watchEvictionPolicy(config, metrics, redis, log);
    const engine = runs('engine') ? await startEngine(config, shared, opts.shardThreadEntry) : undefined;
    const projector = runs('engine') ? await startProjector(config, shared) : undefined;
    const webhooks = runs('engine') ? await startWebhookDelivery(config, shared) : undefined;
    const inbound = runs('inbound') ? await startInbound(config, shared, opts.inbound) : undefined;
    const gateway = runs('gateway') ? await startGateway(config, shared) : undefined;
    // The consumers this process works on; each role's figures come from the processes running it.
    const parts = [...(runs('engine') ? ['delivery', 'projector', 'webhooks'] : []), ...(runs('inbound') ? ['inbound'] : [])];
    const poller = parts.length > 0
        ? await ConsumerPoller.start(nc, metrics, tablePart(jetStreamTable(jetStreamSettings(config)), ...parts).consumers.map((c) => ({ stream: c.stream, consumer: c.config.durable_name })))
        : undefined;
    // One registry, served once: on the HTTP port when the gateway runs here, else on a port of its own.
    let metricsServer;
    if (gateway === undefined) {
        const { host, port, token } = config.metrics;
        metricsServer = await startMetricsServer(metrics, host, port, token).catch(async (err) => {
            await inbound?.drain(100);
            await engine?.drain(100);
            await projector?.stop();
            await webhooks?.drain(100);
            await poller?.stop();
            cp.close();
            await nc.close().catch(() => { });
            await closeRedis(redis);
            throw err;
        });
        log.info({ host: config.metrics.host, port: metricsServer.port }, 'metrics listening');
    }
    let stopping;
    return {
        config,
        nc,
        redis,
        cp,
        ...(gateway !== undefined ? { gateway } : {}),
        ...(engine !== undefined ? { engine } : {}),
        ...(inbound !== undefined ? { inbound } : {}),
        metrics,
        evictionPolicy,
        ...(metricsServer !== undefined ? { metricsPort: metricsServer.port } : {}),
        stop() {
            stopping ??= (async () => {
                const deadline = Date.now() + config.shutdownTimeoutMs;
                const left = () => Math.max(100, deadline - Date.now());
                await gateway?.drain(left());
                await inbound?.drain(left());
                await engine?.drain(left());
                await projector?.stop();
                await webhooks?.drain(left());
                await poller?.stop();
                evictionPolicy.stop();
                await metricsServer?.close();
                cp.close();
                await nc.drain().catch(() => { });
                await closeRedis(redis);
            })();
            return stopping;
        }
    };
}
/** `outbox_nats_connected`, `outbox_redis_connected` and `outbox_role`, read at each scrape. */
function watchConnections(metrics, nc, redis, roles) {
    let natsUp = 1;
    void (async () => {
        for await (const s of nc.status()) {
            if (s.type === 'disconnect')
                natsUp = 0;
            else if (s.type === 'reconnect')
                natsUp = 1;
        }
    })();
    metrics.read('outbox_nats_connected', (set) => { set(nc.isClosed() ? 0 : natsUp); });
    metrics.read('outbox_redis_connected', (set) => { set(redis.status === 'ready' ? 1 : 0); });
    metrics.read('outbox_role', (set) => { for (const role of roles)
        set(1, { role }); });
}
/**
 * The start checked the policy; a later change (CONFIG SET, a parameter group, a failover to a replica configured
 * otherwise) is logged as an error once per change and reported as `outbox_redis_noeviction` 0.
 */
function watchEvictionPolicy(config, metrics, redis, log) {
    let evicting = false;
    const watch = new EvictionPolicyWatch(redis, config.redis.policyCheckMs, (state, policy) => {
        if (state === 'evicting') {
            log.error({ policy }, `Redis now runs with maxmemory-policy ${policy ?? '(not reported)'}; it must be noeviction, ` +
                'or a full Redis drops idempotency keys and schedule state');
        }
        else if (evicting)
            log.info({ policy }, 'Redis runs with maxmemory-policy noeviction again');
        evicting = state === 'evicting';
    });
    void watch.check();
    metrics.read('outbox_redis_noeviction', (set) => { set(watch.ok === false ? 0 : 1); });
    return watch;
}
/** Closing time for the Redis connection: stop resolves once it is closed, not when closing was asked for. */
const REDIS_CLOSE_MS = 1000;
async function closeRedis(redis) {
    if (redis.status === 'end')
        return;
    const ended = new Promise((resolve) => {
        redis.once('end', resolve);
        setTimeout(resolve, REDIS_CLOSE_MS).unref();
    });
    redis.disconnect();
    await ended;
}
/** One line per start that changed something; a bootstrap key that could not be added is the one warning. */
function logBootstrap(log, outcome) {
    if (outcome.kind === 'created') {
        log.info({ organization_id: outcome.organization_id, domain_id: outcome.domain_id }, 'bootstrap organisation created');
    }
    else if (outcome.kind === 'key_added') {
        log.info({ organization_id: outcome.organization_id, domain_id: outcome.domain_id, key_id: outcome.key_id }, 'bootstrap admin key added to the organisation that owns the domain');
    }
    else if (outcome.kind === 'skipped') {
        log.warn({ domain: outcome.domain, owner: outcome.owner }, `OB_BOOTSTRAP_ADMIN_KEY not added: ${outcome.reason}; starting without it`);
    }
}
//# sourceMappingURL=outbox_process.js.map