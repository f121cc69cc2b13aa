import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Redis } from 'ioredis'
import { binary, ServerProcess } from './servers.ts'
import { freePort, waitForPort } from './ports.ts'
import { eventually } from './waiting.ts'

export const SENTINEL_MASTER = 'outboxmaster'

/**
 * A Redis master, one replica and three sentinels (quorum 2) of the test's own, on free ports. Failover settings
 * are small (down after 1 s, failover timeout 3 s) so a killed master is replaced within a few seconds.
 */
export class SentinelSet {
  private constructor (
    readonly master: ServerProcess,
    readonly replica: ServerProcess,
    private readonly sentinels: Array<{ port: number, child: ChildProcess }>,
    private readonly dir: string
  ) {}

  static async start (): Promise<SentinelSet> {
    // A replica's first full sync waits repl-diskless-sync-delay (5 s by default) on the master; without it, a
    // master killed in the first seconds takes everything with it, as it would in production before the first sync.
    const master = await ServerProcess.redis({ args: ['--repl-diskless-sync-delay', '0'] })
    const replica = await ServerProcess.redis({ args: ['--replicaof', '127.0.0.1', String(master.port)] })
    const dir = mkdtempSync(join(tmpdir(), 'outbox-sentinel-'))
    const sentinels: Array<{ port: number, child: ChildProcess }> = []
    const set = new SentinelSet(master, replica, sentinels, dir)
    try {
      for (let i = 0; i < 3; i++) {
        const port = await freePort()
        const conf = join(dir, `sentinel-${i}.conf`)
        // the sentinel rewrites its own file (known replicas and sentinels), so each gets a writable copy
        writeFileSync(conf, [
          `port ${port}`,
          'bind 127.0.0.1',
          `dir ${dir}`,
          `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
          `sentinel failover-timeout ${SENTINEL_MASTER} 3000`,
          `sentinel parallel-syncs ${SENTINEL_MASTER} 1`,
          ''
        ].join('\n'))
        const child = spawn(binary('redis-sentinel'), [conf], { stdio: 'ignore' })
        sentinels.push({ port, child })
        await Promise.race([
          waitForPort(port),
          new Promise((_resolve, reject) => child.once('exit', (code) => reject(new Error(`redis-sentinel exited with ${code}`))))
        ])
      }
      await set.untilFormed(20_000)
      await set.untilReplicaSynced(20_000)
    } catch (err) {
      await set.dispose()
      throw err
    }
    return set
  }

  /** REDIS_URL for Outbox. */
  get url (): string {
    return `redis+sentinel://${this.sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${SENTINEL_MASTER}`
  }

  /** Asks one sentinel something; `undefined` when it does not answer. */
  private async ask (port: number, ...args: string[]): Promise<unknown> {
    const r = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
    r.on('error', () => {})
    try {
      await r.connect()
      return await r.call('SENTINEL', ...args)
    } catch {
      return undefined
    } finally {
      r.disconnect()
    }
  }

  /** The master's port as each sentinel sees it. */
  async masterPorts (): Promise<Array<number | undefined>> {
    return await Promise.all(this.sentinels.map(async (s) => {
      const addr = await this.ask(s.port, 'get-master-addr-by-name', SENTINEL_MASTER) as string[] | undefined
      return addr === undefined || addr === null ? undefined : Number(addr[1])
    }))
  }

  /** Every sentinel knows the replica and the two other sentinels, so a failover can be agreed. */
  private async untilFormed (timeoutMs: number): Promise<void> {
    await eventually(async () => (await Promise.all(this.sentinels.map(async (s) => {
      const fields = await this.ask(s.port, 'master', SENTINEL_MASTER) as string[] | undefined
      if (fields === undefined) return false
      const info = new Map<string, string>()
      for (let i = 0; i + 1 < fields.length; i += 2) info.set(fields[i]!, fields[i + 1]!)
      return info.get('num-slaves') === '1' && info.get('num-other-sentinels') === '2'
    }))).every(Boolean), 'the sentinels to find the replica and each other', timeoutMs, 200)
  }

  /** Resolves once the replica holds the master's data and follows its stream (INFO: master_link_status up). */
  private async untilReplicaSynced (timeoutMs: number): Promise<void> {
    const r = new Redis({
      port: this.replica.port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null
    })
    r.on('error', () => {})
    try {
      await r.connect()
      await eventually(async () => /master_link_status:up/.test(await r.info('replication')),
        'the replica to sync with the master', timeoutMs, 100)
    } finally {
      r.disconnect()
    }
  }

  /** Resolves once every sentinel names `port` as the master. */
  async untilMasterIs (port: number, timeoutMs: number): Promise<void> {
    await eventually(async () => (await this.masterPorts()).every((p) => p === port),
      `the sentinels to promote the replica on ${port}`, timeoutMs, 100)
  }

  async dispose (): Promise<void> {
    await Promise.all(this.sentinels.map(async ({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return
      await new Promise<void>((resolve) => { child.once('exit', () => resolve()); child.kill('SIGKILL') })
    }))
    await this.replica.dispose()
    await this.master.dispose()
    rmSync(this.dir, { recursive: true, force: true })
  }
}
