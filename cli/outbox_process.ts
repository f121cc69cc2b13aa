import { jetstream } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import { describeRedisTarget, type Config } from '../config/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { startProjector } from '../stores/read_model/mod.ts'
import { ReputationGuard } from '../stores/reputation/mod.ts'
import { connectNats, connectRedis, redisReady, ensureStreams, assertNoEviction, EvictionPolicyWatch } from '../stores/clients/mod.ts'
import { startGateway, type Gateway } from '../gateway/main.ts'
import { bootstrap, type BootstrapOutcome } from '../gateway/control/orgs.ts'
import { startEngine, type Engine } from '../engine/main.ts'

/** A server URL without its password, for messages and logs. */
function redact (url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.toString().replace(/\/$/, '')
  } catch {
    return url
  }
}
import { startWebhookDelivery } from '../webhooks/mod.ts'
import { startInbound, type Inbound, type InboundTestOptions } from '../inbound/mod.ts'
import { OutboxMetrics, ConsumerPoller, startMetricsServer, type MetricsServer } from '../stores/metrics/mod.ts'
import { jetStreamSettings, jetStreamTable, streamSettings, tablePart, type JetStreamPart } from '../protocol/mod.ts'

export interface OutboxProcess {
  readonly config: Config
  readonly nc: NatsConnection
  readonly redis: Redis
  readonly cp: ControlPlane
  readonly gateway?: Gateway
  readonly engine?: Engine
  readonly inbound?: Inbound
  /** Every part's metrics, one registry per process. */
  readonly metrics: OutboxMetrics
  /** Redis's eviction policy, read again every `OB_REDIS_POLICY_CHECK_MS`: `ok` false means Redis may evict keys. */
  readonly evictionPolicy: EvictionPolicyWatch
  /** The port of `GET /metrics` when this process runs no gateway (OB_METRICS_PORT); else the gateway serves it. */
  readonly metricsPort?: number
  /** Ordered shutdown: stop accepting, drain the engine, then close NATS and Redis. */
  stop: () => Promise<void>
}

/**
 * Starts the parts `config.role` names, sharing one NATS and one Redis connection between them.
 * `shardThreadEntry` replaces the file the engine's shard threads load (see ShardActors), `inbound` what the
 * inbound part lets tests change; only tests set them.
 */
export async function startOutbox (
  config: Config, log: Logger, opts: { shardThreadEntry?: URL, inbound?: InboundTestOptions } = {}
): Promise<OutboxProcess> {
  const nc = await connectNats(config.nats.servers, `outbox-${config.role}`).catch((err: Error) => {
    throw new Error(`no NATS server answers at ${config.nats.servers.map(redact).join(',')} (${err.message}); start one or set NATS_URL`)
  })
  const redis = connectRedis(config.redis.target, `outbox-${config.role}`)
  // ioredis reports every failed reconnect; one line per outage is enough, and /readyz tells the rest.
  let redisDown = false
  redis.on('error', (err: Error) => {
    if (!redisDown) log.warn({ err: err.message }, 'Redis connection lost; retrying')
    redisDown = true
  })
  redis.on('ready', () => { if (redisDown) log.info('Redis connection restored'); redisDown = false })
  await redisReady(redis).catch(async (err: Error) => {
    redis.disconnect()
    await nc.close()
    throw new Error(`no Redis answers at ${describeRedisTarget(config.redis.target)} (${err.message}); start one or set REDIS_URL`)
  })
  // An evicting Redis drops idempotency keys and schedule state when it is full: refuse it, as job queues do.
  await assertNoEviction(redis, describeRedisTarget(config.redis.target)).catch(async (err: Error) => {
    redis.disconnect()
    await nc.close()
    throw err
  })
  // A request that times out here (a busy or still-forming cluster) fails the start; nothing is left open.
  let cp: ControlPlane | undefined
  let bootstrapped: BootstrapOutcome
  try {
    await ensureStreams(nc, streamSettings(config))
    cp = await ControlPlane.open(nc, {
      replicas: config.nats.replicas, storeBytes: config.nats.storeBytes, ...(config.secret !== undefined ? { secret: config.secret } : {})
    })
    bootstrapped = await bootstrap(cp, config)
  } catch (err) {
    cp?.close()
    await nc.close().catch(() => {})
    await closeRedis(redis)
    throw err
  }
  logBootstrap(log, bootstrapped)
  const metrics = new OutboxMetrics()
  const shared = { nc, redis, cp, log, metrics }
  const runs = (part: 'gateway' | 'engine' | 'inbound'): boolean => config.role === 'all' || config.role === part
  watchConnections(metrics, nc, redis, (['gateway', 'engine', 'inbound'] as const).filter(runs))
  const evictionPolicy = watchEvictionPolicy(config, metrics, redis, log)
  const engine = runs('engine') ? await startEngine(config, shared, opts.shardThreadEntry) : undefined
  const projector = runs('engine')
    ? await startProjector(config, shared, new ReputationGuard(config, { ...shared, js: jetstream(nc) }),
      (org) => shared.cp.readModelRetention(org))
    : undefined
  const webhooks = runs('engine') ? await startWebhookDelivery(config, shared) : undefined
  const inbound = runs('inbound') ? await startInbound(config, shared, opts.inbound) : undefined
  const gateway = runs('gateway') ? await startGateway(config, shared) : undefined
  // The consumers this process works on; each role's figures come from the processes running it.
  const parts: JetStreamPart[] = [
    ...(runs('engine') ? ['delivery', 'projector', 'webhooks'] as const : []),
    ...(runs('inbound') ? ['inbound'] as const : [])
  ]
  const polled = tablePart(jetStreamTable(jetStreamSettings(config)), ...parts).consumers
    .map((c) => ({ stream: c.stream, consumer: c.config.durable_name }))
  const poller = parts.length > 0 ? await ConsumerPoller.start(nc, metrics, polled) : undefined
  // One registry, served once: on the HTTP port when the gateway runs here, else on a port of its own.
  let metricsServer: MetricsServer | undefined
  if (gateway === undefined) {
    const { host, port, token } = config.metrics
    metricsServer = await startMetricsServer(metrics, host, port, token).catch(async (err: unknown) => {
      await inbound?.drain(100)
      await engine?.drain(100)
      await projector?.stop()
      await webhooks?.drain(100)
      await poller?.stop()
      cp.close()
      await nc.close().catch(() => {})
      await closeRedis(redis)
      throw err
    })
    log.info({ host: config.metrics.host, port: metricsServer.port }, 'metrics listening')
  }
  let stopping: Promise<void> | undefined
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
    stop () {
      stopping ??= (async () => {
        const deadline = Date.now() + config.shutdownTimeoutMs
        const left = (): number => Math.max(100, deadline - Date.now())
        // each part is ended even when one before it failed: a connection left open keeps reconnecting, and the
        // process never exits
        const failures: unknown[] = []
        const step = async (end: () => unknown): Promise<void> => {
          try { await end() } catch (err) { failures.push(err) }
        }
        await step(async () => await gateway?.drain(left()))
        await step(async () => await inbound?.drain(left()))
        await step(async () => await engine?.drain(left()))
        await step(async () => await projector?.stop())
        await step(async () => await webhooks?.drain(left()))
        await step(async () => await poller?.stop())
        await step(() => { evictionPolicy.stop() })
        await step(async () => await metricsServer?.close())
        await step(() => { cp.close() })
        // a drain that cannot finish (the server gone, say) still closes the connection
        await nc.drain().catch(async () => { await nc.close().catch(() => {}) })
        await closeRedis(redis)
        if (failures.length > 0) throw new AggregateError(failures, 'parts of the process failed to stop cleanly')
      })()
      return stopping
    }
  }
}

/** `outbox_nats_connected`, `outbox_redis_connected` and `outbox_role`, read at each scrape. */
function watchConnections (metrics: OutboxMetrics, nc: NatsConnection, redis: Redis, roles: readonly string[]): void {
  let natsUp = 1
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') natsUp = 0
      else if (s.type === 'reconnect') natsUp = 1
    }
  })()
  metrics.read('outbox_nats_connected', (set) => { set(nc.isClosed() ? 0 : natsUp) })
  metrics.read('outbox_redis_connected', (set) => { set(redis.status === 'ready' ? 1 : 0) })
  metrics.read('outbox_role', (set) => { for (const role of roles) set(1, { role }) })
}

/**
 * The start checked the policy; a later change (CONFIG SET, a parameter group, a failover to a replica configured
 * otherwise) is logged as an error once per change and reported as `outbox_redis_noeviction` 0.
 */
function watchEvictionPolicy (config: Config, metrics: OutboxMetrics, redis: Redis, log: Logger): EvictionPolicyWatch {
  let evicting = false
  const watch = new EvictionPolicyWatch(redis, config.redis.policyCheckMs, (state, policy) => {
    if (state === 'evicting') {
      log.error({ policy }, `Redis now runs with maxmemory-policy ${policy ?? '(not reported)'}; it must be noeviction, ` +
        'or a full Redis drops idempotency keys and schedule state')
    } else if (evicting) log.info({ policy }, 'Redis runs with maxmemory-policy noeviction again')
    evicting = state === 'evicting'
  })
  void watch.check()
  metrics.read('outbox_redis_noeviction', (set) => { set(watch.ok === false ? 0 : 1) })
  return watch
}

/** Closing time for the Redis connection: stop resolves once it is closed, not when closing was asked for. */
const REDIS_CLOSE_MS = 1000

async function closeRedis (redis: Redis): Promise<void> {
  if (redis.status === 'end') return
  const ended = new Promise<void>((resolve) => {
    redis.once('end', resolve)
    setTimeout(resolve, REDIS_CLOSE_MS).unref()
  })
  redis.disconnect()
  await ended
}

/** One line per start that changed something; a bootstrap key that could not be added is the one warning. */
function logBootstrap (log: Logger, outcome: BootstrapOutcome): void {
  if (outcome.kind === 'created') {
    log.info({ organization_id: outcome.organization_id, domain_id: outcome.domain_id }, 'bootstrap organisation created')
  } else if (outcome.kind === 'key_added') {
    log.info({ organization_id: outcome.organization_id, domain_id: outcome.domain_id, key_id: outcome.key_id },
      'bootstrap admin key added to the organisation that owns the domain')
  } else if (outcome.kind === 'skipped') {
    log.warn({ domain: outcome.domain, owner: outcome.owner }, `OB_BOOTSTRAP_ADMIN_KEY not added: ${outcome.reason}; starting without it`)
  }
}
