import type { Redis } from 'ioredis'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { SmtpSink, type SinkOptions } from '../../helpers/smtp_sink.ts'
import { DnsServer, type DnsTable } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued } from '../../helpers/engine_env.ts'
import { ENGINE_CHILD, spawnChild, stopChild, type Child } from '../../helpers/children.ts'
import type { QueuedMessage } from '../../../protocol/mod.ts'
import { engineRedis } from './engine_clients.ts'

/** Google's, Microsoft's and a site's MX hosts, all answered by the sink on 127.0.0.1. */
/**
 * How long the cluster tests wait for their mail: generous, as a timeout only ends a failing test. On a loaded machine
 * an engine can miss its 2 s lease; a message it held then comes back to the other engine only after the 60 s ack
 * wait (OB_ENGINE_ACK_WAIT_MS), so a wait of 60 s could end a passing test.
 */
export const DELIVERED_WITHIN_MS = 180_000

export const EGRESS_DNS: DnsTable = {
  MX: {
    'workspace.test': [{ exchange: 'aspmx.l.google.com', priority: 1 }],
    'hosted365.test': [{ exchange: 'hosted365-test.mail.protection.outlook.com', priority: 0 }],
    'small.test': [{ exchange: 'mx.small.test', priority: 10 }]
  },
  A: {
    'aspmx.l.google.com': ['127.0.0.1'],
    'hosted365-test.mail.protection.outlook.com': ['127.0.0.1'],
    'mx.small.test': ['127.0.0.1']
  }
}

/**
 * The setting of the egress scenarios: a NATS and a Redis of the test's own, the SMTP sink on 127.0.0.1 as every
 * MX host (EGRESS_DNS), this process as the gateway (it writes the control plane and publishes as the gateway does),
 * and `engines` engine processes, each with OB_ENGINE_THREADS shard threads, started once the egress configuration
 * is in place (`configure`). A Redis client of the test's own reads the egress state.
 */
export interface EgressCluster {
  sink: SmtpSink
  dns: DnsServer
  ob: TestOutbox
  org: TestOrg
  events: EventWatcher
  redis: Redis
  engines: Child[]
  /** Starts one more engine process, with the same settings as the first ones (added to `engines`). */
  addEngine: () => Promise<Child>
  publish: (m: QueuedMessage) => Promise<void>
  close: () => Promise<void>
}

export async function startEgressCluster (opts: {
  engines: number
  threads?: number
  env?: Record<string, string>
  sink?: SinkOptions
  configure: (ob: TestOutbox, org: TestOrg) => Promise<void>
}): Promise<EgressCluster> {
  const nats = await ServerProcess.nats()
  const redisServer = await ServerProcess.redis()
  const sink = await SmtpSink.start({ keepRaw: false, ...opts.sink })
  const dns = await DnsServer.start(EGRESS_DNS)
  const env = {
    OB_DNS_SERVERS: dns.address, OB_SMTP_OUTBOUND_PORT: String(sink.port), OB_SMTP_ALLOW_PRIVATE: 'true',
    // deferred recipients come back after a second, for ten minutes, so a loaded machine does not give them up
    OB_DELIVERY_RETRY_SCHEDULE: '1,1,1,1,1,1,1,1,1,1,600', OB_SHUTDOWN_TIMEOUT_MS: '2000', OB_SHARD_LEASE_MS: '2000', ...opts.env
  }
  const ob = await TestOutbox.start({ nats, redis: redisServer, env: { ...env, OB_ROLE: 'gateway' } })
  const org = await ob.org()
  await opts.configure(ob, org)
  const events = await EventWatcher.start(ob.proc.nc, org.orgId)
  const redis = await engineRedis(redisServer.url)
  const engines: Child[] = []
  const childEnv = { ...env, NATS_URL: nats.url, REDIS_URL: redisServer.url, OB_ENGINE_THREADS: String(opts.threads ?? 2) }
  for (let i = 0; i < opts.engines; i++) engines.push(await spawnChild(ENGINE_CHILD, childEnv))
  return {
    sink,
    dns,
    ob,
    org,
    events,
    redis,
    engines,
    async addEngine () {
      const e = await spawnChild(ENGINE_CHILD, childEnv)
      engines.push(e)
      return e
    },
    publish: async (m) => { await publishQueued(ob.proc.nc, ob.proc.config, m) },
    async close () {
      events.stop()
      await Promise.all(engines.map(async (e) => { await stopChild(e, 'SIGKILL') }))
      redis.disconnect()
      await ob.close()
      await sink.close()
      await dns.close()
      await nats.dispose()
      await redisServer.dispose()
    }
  }
}

/** How many copies of each message the sink accepted, by Message-ID (`<id@domain>`). */
export function copiesAtSink (sink: SmtpSink): Map<string, number> {
  const n = new Map<string, number>()
  for (const m of sink.messages) n.set(m.messageId, (n.get(m.messageId) ?? 0) + 1)
  return n
}

/** The Message-ID the engine gives a message of `org`. */
export function messageIdOf (org: TestOrg, m: QueuedMessage): string {
  return `<${m.id}@${org.domain}>`
}
