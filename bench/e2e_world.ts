import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { connect } from '@nats-io/transport-node'
import { loadConfig } from '../config/mod.ts'
import { ControlPlane } from '../stores/control_plane/mod.ts'
import { ensureStreams } from '../stores/clients/mod.ts'
import { newId, randomToken, streamSettings } from '../protocol/mod.ts'
import { createOrganization } from '../gateway/control/orgs.ts'
import { ServerProcess } from '../test/helpers/servers.ts'
import { testCa } from '../test/helpers/https_receiver.ts'
import { spawnCli } from '../test/helpers/cli.ts'
import { freePort } from '../test/helpers/ports.ts'
import { RemoteSink } from './engine.ts'
import type { ScrapeTarget } from './scrape.ts'

/**
 * Everything the end-to-end bench runs, each in its own process: nats-server and redis-server of its own on free
 * ports, the SMTP sink, the HTTPS webhook receiver, and Outbox as it runs in production (`node dist/cli/main.js
 * start`, every role in one process), with one organisation whose webhook gets every `delivered` event.
 */

/** The webhook receiver process (bench/webhook_receiver_process.ts). */
export class RemoteReceiver {
  private constructor (private readonly child: ChildProcess, readonly port: number) {}

  static async start (secret: string): Promise<RemoteReceiver> {
    const ca = testCa()
    const file = fileURLToPath(new URL('./webhook_receiver_process.js', import.meta.url))
    const child = fork(file, [join(ca.dir, 'server.key'), join(ca.dir, 'server.pem')], {
      stdio: 'inherit', env: { ...process.env, OB_BENCH_WEBHOOK_SECRET: secret }
    })
    const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve((m as { port: number }).port)))
    return new RemoteReceiver(child, port)
  }

  get pid (): number | undefined { return this.child.pid }

  private asking: Promise<unknown> = Promise.resolve()

  /** One question at a time: the answers carry no tag, so two in flight could each take the other's. */
  private async ask<T> (what: string): Promise<T> {
    const answer = this.asking.then(async () => await new Promise<T>((resolve) => {
      this.child.once('message', (m) => resolve(m as T))
      this.child.send(what)
    }))
    this.asking = answer.catch(() => {})
    return await answer
  }

  /** Signed `delivered` requests so far and when the last one came (ms since the epoch). */
  async count (): Promise<{ received: number, lastAt: number }> { return await this.ask('count') }

  /** Message id → `delivered` requests, and requests with a bad signature or of another type. */
  async report (): Promise<{ perMessage: Map<string, number>, bad: number }> {
    const r = await this.ask<{ perMessage: Array<[string, number]>, bad: number }>('report')
    return { perMessage: new Map(r.perMessage), bad: r.bad }
  }

  async close (): Promise<void> {
    if (this.child.exitCode !== null) return
    await new Promise<void>((resolve) => { this.child.once('exit', () => resolve()); this.child.send('close') })
  }
}

export interface E2eWorld {
  nats: ServerProcess
  redis: ServerProcess
  sink: RemoteSink
  receiver: RemoteReceiver
  outbox: ChildProcess
  baseUrl: string
  key: string
  domain: string
  /**
   * Every `GET /metrics` of the run's Outbox processes. There is one: `outbox start` runs every role (OB_ROLE
   * all), and its gateway serves the one registry on the HTTP port, so no OB_METRICS_PORT server is started.
   */
  metrics: ScrapeTarget[]
  /** Process ids by role, for CPU accounting (the load generator is this process). */
  pids: () => Record<'outbox' | 'nats' | 'redis' | 'sink' | 'receiver' | 'load_generator', number | undefined>
  close: () => Promise<void>
}

export async function untilReady (baseUrl: string, outbox: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (outbox.exitCode !== null) throw new Error(`outbox start exited with ${outbox.exitCode}`)
    const res = await fetch(`${baseUrl}/readyz`).catch(() => undefined)
    await res?.arrayBuffer()
    if (res?.status === 200) return
    if (Date.now() > deadline) throw new Error('outbox start did not become ready in time')
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/**
 * `profileDir`: Outbox runs with `--cpu-prof` (main thread and every worker thread), writing its `.cpuprofile`
 * files there when it exits at the end of the run. `nodeFlags`: more flags for Outbox's node (V8 heap settings…).
 */
export async function startE2eWorld (opts: { profileDir?: string, nodeFlags?: string[] } = {}): Promise<E2eWorld> {
  const [nats, redis] = await Promise.all([ServerProcess.nats(), ServerProcess.redis()])
  const dataDir = mkdtempSync(join(tmpdir(), 'outbox-bench-e2e-'))
  const secret = `whsec_${randomToken(32)}`
  const [sink, receiver] = await Promise.all([RemoteSink.start({ record: true }), RemoteReceiver.start(secret)])
  let outbox: ChildProcess | undefined
  const close = async (): Promise<void> => {
    if (outbox !== undefined && outbox.exitCode === null && outbox.signalCode === null) {
      const o = outbox
      const exited = new Promise<void>((resolve) => o.once('exit', () => resolve()))
      o.kill('SIGTERM')
      const timer = setTimeout(() => o.kill('SIGKILL'), 20_000)
      await exited
      clearTimeout(timer)
    }
    await Promise.all([sink.close(), receiver.close()])
    await Promise.all([nats.dispose(), redis.dispose()])
    rmSync(dataDir, { recursive: true, force: true })
  }
  try {
    const env = { NATS_URL: nats.url, REDIS_URL: redis.url, OB_DOMAIN_VERIFICATION: 'off' }
    const config = loadConfig(env)
    const nc = await connect({ servers: nats.url })
    await ensureStreams(nc, streamSettings(config))
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const domain = `e2e-${Date.now().toString(36)}.bench.test`
    const org = await createOrganization(cp, config, { name: 'e2e', domain, plan: 'enterprise' })
    const now = new Date().toISOString()
    const hook = { id: newId('wh'), org_id: org.organization_id, url: `https://127.0.0.1:${receiver.port}/hook`, events: ['delivered'], secret, status: 'active' as const, created_at: now, updated_at: now }
    await cp.webhooks.put(`${org.organization_id}.${hook.id}`, hook)
    cp.close()
    await nc.close()
    const [httpPort, inboundPort] = [await freePort(), await freePort()]
    const baseUrl = `http://127.0.0.1:${httpPort}`
    outbox = spawnCli(['start'], {
      ...env,
      OB_SMTP_RELAY: sink.url,
      OB_HTTP_PORT: String(httpPort),
      OB_PUBLIC_URL: baseUrl,
      OB_SMTP_INBOUND_PORT: String(inboundPort),
      OB_SMTP_SUBMISSION_PORT: '0',
      OB_DATA_DIR: dataDir,
      OB_WEBHOOK_CA_FILE: testCa().caFile,
      OB_WEBHOOK_ALLOW_PRIVATE: 'true',
      OB_ENTERPRISE_RATE_LIMIT: '1000000',
      OB_LOG_LEVEL: 'error'
    }, [...(opts.profileDir !== undefined ? ['--cpu-prof', `--cpu-prof-dir=${opts.profileDir}`] : []), ...(opts.nodeFlags ?? [])]).child
    await untilReady(baseUrl, outbox)
    const o = outbox
    return {
      nats,
      redis,
      sink,
      receiver,
      outbox: o,
      baseUrl,
      key: org.api_key,
      domain,
      metrics: [{ name: 'Outbox (outbox start, every role): gateway HTTP port', url: `${baseUrl}/metrics` }],
      pids: () => ({
        outbox: o.pid, nats: nats.pid, redis: redis.pid, sink: sink.pid, receiver: receiver.pid, load_generator: process.pid
      }),
      close
    }
  } catch (err) {
    await close()
    throw err
  }
}
