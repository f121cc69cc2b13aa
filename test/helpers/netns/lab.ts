import { after } from 'node:test'
import { Kvm, type KV } from '@nats-io/kv'
import { ENGINE_CHILD, GATEWAY_CHILD } from '../children.ts'
import { TestOutbox, type TestOrg } from '../outbox.ts'
import type { ServerProcess } from '../servers.ts'
import { SmtpSink } from '../smtp_sink.ts'
import { KV_SHARD_LEASES } from '../../../protocol/mod.ts'
import type { LeaseRecord } from '../../../engine/leases/mod.ts'
import { HostProcess, stopAll } from './host_process.ts'
import { Net, type Host } from './net.ts'
import { natsUrl, REDIS_PORT, removeDirs, startNatsCluster, startRedis, startSentinelSet, type SentinelLayout } from './services.ts'

/**
 * A whole installation on hosts of its own (net.ts), laid out as docs/scaling.md deploys one on several machines:
 *
 *   n1 n2 n3   .11–.13  NATS cluster with JetStream, every stream and bucket with three replicas
 *   r1 (r2)    .21(.22) Redis master (and, with `sentinel`, a replica and three Sentinels on s1–s3, .23–.25)
 *   g1…        .31…     gateways (HTTP on 8080)
 *   e1…        .41…     engines, sharing the shards through leases
 *   root       .1       this test process: the SMTP sink the engines relay to, the client that sends through
 *                       the gateways, and an admin gateway (TestOutbox) that creates the organisation
 *
 * `dispose` ends every process and deletes every namespace, also after a failed start.
 */
export const GATEWAY_PORT = 8080
const dec = new TextDecoder()

export interface LabOptions {
  engines?: number
  gateways?: number
  sentinel?: boolean
  shards?: number
  /** Extra settings for the engines (and gateways), as the environment gives them. */
  env?: Record<string, string>
  /** How long the sink holds back its reply to the DATA of a `slow…` recipient (default 1.5 s; mail_flow.ts sends them). */
  slowMs?: number
  /** Runs once everything is up, before the scenario (a proxy in front of a gateway, say); disposed with the lab on failure. */
  onReady?: (lab: Lab) => Promise<void>
}

export class Lab {
  readonly gateways: HostProcess[] = []
  readonly engines: HostProcess[] = []
  nats: HostProcess[] = []
  redis: HostProcess[] = []
  sentinel?: SentinelLayout
  sink!: SmtpSink
  admin!: TestOutbox
  org!: TestOrg
  key!: string
  leases!: KV
  readonly shards: number
  natsUrl = ''
  redisUrl = ''
  private engineEnv: Record<string, string> = {}

  private constructor (readonly net: Net, private readonly opts: LabOptions) {
    this.shards = opts.shards ?? 6
  }

  static async start (opts: LabOptions = {}): Promise<Lab> {
    const lab = new Lab(Net.create(), opts)
    try {
      await lab.build()
    } catch (err) {
      await lab.dispose()
      throw err
    }
    return lab
  }

  private async build (): Promise<void> {
    const { net, opts } = this
    const natsHosts = [1, 2, 3].map((i) => net.addHost(`n${i}`, 10 + i))
    const master = net.addHost('r1', 21)
    this.nats = await startNatsCluster(natsHosts, `obl${process.pid}`)
    this.natsUrl = natsUrl(natsHosts)
    if (opts.sentinel === true) {
      const replica = net.addHost('r2', 22)
      const sentinels = [1, 2, 3].map((i) => net.addHost(`s${i}`, 22 + i))
      this.sentinel = await startSentinelSet(master, replica, sentinels)
      this.redis = [this.sentinel.master, this.sentinel.replica]
      this.redisUrl = this.sentinel.url
    } else {
      this.redis = [await startRedis(master)]
      this.redisUrl = `redis://${master.address}:${REDIS_PORT}`
    }
    this.sink = await SmtpSink.start({ keepRaw: false, host: net.rootAddress, slowMs: opts.slowMs ?? 1500 })
    const common = {
      NATS_URL: this.natsUrl,
      REDIS_URL: this.redisUrl,
      OB_NATS_REPLICAS: '3',
      OB_ENGINE_SHARDS: String(this.shards),
      // one shard thread per engine: three engines and a whole cluster share the two cores with the main test group
      OB_ENGINE_THREADS: '1',
      OB_DOMAIN_VERIFICATION: 'off',
      OB_SHUTDOWN_TIMEOUT_MS: '2000'
    }
    // the streams and buckets are made R3 by the first process on a cluster that has just formed: a request may
    // time out on a busy machine, as a process started by systemd would be restarted
    const stub = { url: '' } as unknown as ServerProcess // TestOutbox connects by REDIS_URL/NATS_URL below, owns neither
    this.admin = await retrying(async () => await TestOutbox.start({ nats: stub, redis: stub, env: { ...common, OB_ROLE: 'gateway' } }))
    this.org = await retrying(async () => await this.admin.org('pro'))
    this.key = await retrying(async () => await this.admin.key(this.org, ['send', 'read']))
    this.leases = await retrying(async () => await new Kvm(this.admin.proc.nc).open(KV_SHARD_LEASES))
    for (let i = 1; i <= (opts.gateways ?? 1); i++) {
      const h = net.addHost(`g${i}`, 30 + i)
      this.gateways.push(await retrying(async () => await HostProcess.start(h, 'gateway', process.execPath, [GATEWAY_CHILD], {
        env: { ...common, OB_HTTP_HOST: h.address, OB_HTTP_PORT: String(GATEWAY_PORT), ...opts.env },
        ready: /ready \d+\n/
      })))
    }
    this.engineEnv = { ...common, OB_SMTP_RELAY: this.sink.url, ...opts.env }
    for (let i = 1; i <= (opts.engines ?? 3); i++) await this.addEngine(net.addHost(`e${i}`, 40 + i))
    await opts.onReady?.(this)
  }

  async addEngine (h: Host): Promise<HostProcess> {
    const e = await retrying(async () => await HostProcess.start(h, 'engine', process.execPath, [ENGINE_CHILD], {
      env: this.engineEnv, ready: /ready\n/
    }))
    this.engines.push(e)
    return e
  }

  /** Each gateway's base URL (`http://<host address>:8080`). */
  get gatewayUrls (): string[] {
    return this.gateways.map((g) => `http://${g.host.address}:${GATEWAY_PORT}`)
  }

  /** Shard → the address of the host whose engine holds its lease now (null: nobody, or expired). */
  async shardOwners (): Promise<Array<string | null>> {
    const out: Array<string | null> = []
    for (let s = 0; s < this.shards; s++) {
      const e = await this.leases.get(`outbound.shard.${s}`).catch(() => null)
      const rec = e === null || e.operation !== 'PUT' ? undefined : JSON.parse(dec.decode(e.value)) as LeaseRecord
      out.push(rec === undefined || rec.expires_at < Date.now() ? null : this.ownerAddress(rec.owner))
    }
    return out
  }

  /** The address of the host whose engine writes leases as `owner` (the id itself for an engine not of this lab). */
  ownerAddress (owner: string): string {
    // owner ids are `<host>-<pid>-<random>`
    const pid = Number(owner.split('-').at(-2))
    return this.engines.find((e) => e.pid === pid)?.host.address ?? owner
  }

  /** Ends every process (Outbox's first, then the servers), the sink and the admin, and deletes the hosts. */
  async dispose (): Promise<void> {
    await Promise.all([...this.engines, ...this.gateways].map(async (p) => await p.stop('SIGKILL')))
    await this.admin?.close().catch(() => {})
    await this.sink?.close()
    const servers = [...this.nats, ...this.redis, ...(this.sentinel?.sentinels ?? [])]
    await Promise.all(servers.map(async (p) => await p.stop('SIGKILL')))
    await stopAll() // whatever a scenario started on a host of its own (a webhook receiver, say)
    this.net.dispose()
    removeDirs()
  }
}

/**
 * Once a file's labs are gone nothing of them should keep the test process alive; if something does (a connection that keeps
 * reconnecting to a server that was killed, say), the process would wait for the file's timeout. This names what
 * is left on stderr, which the test report shows; the timer itself never keeps the process up.
 */
after(() => {
  setTimeout(() => {
    process.stderr.write(`60 s after its last test this file still holds: ${process.getActiveResourcesInfo().join(', ')}\n`)
  }, 60_000).unref()
})

export async function retrying<T> (fn: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn()
    } catch (err) {
      if (i >= attempts) throw err
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }
}
