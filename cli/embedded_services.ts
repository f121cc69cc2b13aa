import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join, resolve } from 'node:path'
import type { Logger } from 'pino'
import { CliError, ensureBinary, parseNatsVersion, supportsSyncAlways } from './binaries.ts'

/** The addresses `NATS_URL` and `REDIS_URL` default to; the CLI starts its own servers there when nothing answers. */
export const DEFAULT_NATS_PORT = 4222
export const DEFAULT_REDIS_PORT = 6379
const HOST = '127.0.0.1'
const READY_TIMEOUT_MS = 15_000
const STOP_TIMEOUT_MS = 10_000

/** Pure decision: start a server only when its URL was not configured and nothing answers at the default. */
export function planEmbedded (
  input: { natsConfigured: boolean, redisConfigured: boolean, natsAnswers: boolean, redisAnswers: boolean }
): { nats: boolean, redis: boolean } {
  return { nats: !input.natsConfigured && !input.natsAnswers, redis: !input.redisConfigured && !input.redisAnswers }
}

/** True when something accepts TCP connections on host:port within `timeoutMs`. */
export async function answers (port: number, host = HOST, timeoutMs = 500): Promise<boolean> {
  return await new Promise((done) => {
    const s = connect(port, host)
    const finish = (ok: boolean): void => { s.destroy(); done(ok) }
    s.setTimeout(timeoutMs, () => finish(false))
    s.once('connect', () => finish(true))
    s.once('error', () => finish(false))
  })
}

export interface ManagedServer {
  readonly name: 'nats-server' | 'redis-server'
  readonly url: string
  stop: () => Promise<void>
}

async function waitUntilAnswering (child: ChildProcess, name: string, port: number, logFile: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS
  while (!(await answers(port))) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new CliError(`outbox: ${name} exited at start (code ${child.exitCode ?? child.signalCode}); see ${logFile}`)
    }
    if (Date.now() > deadline) {
      throw new CliError(`outbox: ${name} did not answer on port ${port} within ${READY_TIMEOUT_MS / 1000} s; see ${logFile}`)
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

function manage (name: ManagedServer['name'], child: ChildProcess, url: string): ManagedServer {
  // Own process group, so a Ctrl-C in the terminal reaches Outbox only: Outbox drains first, then stops the servers.
  const killOnExit = (): void => { if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL') }
  process.once('exit', killOnExit)
  return {
    name,
    url,
    async stop () {
      process.off('exit', killOnExit)
      if (child.exitCode !== null || child.signalCode !== null) return
      await new Promise<void>((done) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
        child.once('exit', () => { clearTimeout(timer); done() })
        child.kill('SIGTERM')
      })
    }
  }
}

/**
 * The nats-server configuration file: where JetStream keeps data, how much it may keep (`storeBytes`,
 * OB_NATS_STORE_MB, which Outbox divides among its streams below it) and how often it syncs to disk.
 */
export function natsConfigText (input: { host: string, port: number, storeDir: string, syncAlways: boolean, storeBytes?: number }): string {
  const lines = [
    '# Written by `outbox start` for its embedded NATS server; rewritten at every start.',
    `listen: "${input.host}:${input.port}"`,
    // A send body may be 10 MB; the queued message carries it plus a little framing.
    'max_payload: 12MB',
    'jetstream {',
    `  store_dir: ${JSON.stringify(input.storeDir)}`
  ]
  if (input.storeBytes !== undefined) lines.push(`  max_file_store: ${input.storeBytes}`)
  // With `always`, JetStream fsyncs before it acknowledges a publish, so a 202 survives power loss.
  if (input.syncAlways) lines.push('  sync_interval: always')
  lines.push('}', '')
  return lines.join('\n')
}

export async function spawnNats (
  opts: { binary: string, dataDir: string, port: number, log: Logger, storeBytes?: number }
): Promise<ManagedServer> {
  const storeDir = join(opts.dataDir, 'nats')
  const logFile = join(opts.dataDir, 'nats.log')
  const confFile = join(opts.dataDir, 'nats.conf')
  mkdirSync(storeDir, { recursive: true })
  const versionText = execFileSync(opts.binary, ['--version'], { encoding: 'utf8' })
  const syncAlways = supportsSyncAlways(parseNatsVersion(versionText))
  writeFileSync(confFile, natsConfigText({
    host: HOST, port: opts.port, storeDir, syncAlways, ...(opts.storeBytes !== undefined ? { storeBytes: opts.storeBytes } : {})
  }))
  if (!syncAlways) {
    opts.log.warn(
      `${versionText.trim()} lacks sync_interval: always; acknowledged messages can be lost on power failure until NATS 2.10+ is used`
    )
  }
  const child = spawn(opts.binary, ['-c', confFile, '-js', '-a', HOST, '-p', String(opts.port), '-l', logFile], {
    stdio: 'ignore', detached: true
  })
  await waitUntilAnswering(child, 'nats-server', opts.port, logFile)
  opts.log.info({ port: opts.port, storeDir, syncAlways }, 'embedded nats-server started')
  return manage('nats-server', child, `nats://${HOST}:${opts.port}`)
}

export async function spawnRedis (opts: { binary: string, dataDir: string, port: number, log: Logger }): Promise<ManagedServer> {
  const dir = join(opts.dataDir, 'redis')
  const logFile = join(opts.dataDir, 'redis.log')
  mkdirSync(dir, { recursive: true })
  const child = spawn(opts.binary, [
    '--port', String(opts.port), '--bind', HOST, '--dir', dir,
    '--appendonly', 'yes', '--appendfsync', 'everysec', '--maxmemory-policy', 'noeviction', '--logfile', logFile
  ], { stdio: 'ignore', detached: true })
  await waitUntilAnswering(child, 'redis-server', opts.port, logFile)
  opts.log.info({ port: opts.port, dir }, 'embedded redis-server started')
  return manage('redis-server', child, `redis://${HOST}:${opts.port}`)
}

export interface EmbeddedServices {
  readonly started: readonly ManagedServer[]
  /** Stops only the servers this process started, Redis first so nothing writes to it while NATS drains. */
  stop: () => Promise<void>
}

/**
 * Starts nats-server and redis-server under `dataDir` when their URLs are unset and nothing answers at the
 * given ports. The CLI passes the default ports; tests pass free ones.
 */
export async function startEmbeddedServices (opts: {
  natsConfigured: boolean
  redisConfigured: boolean
  dataDir: string
  env: Readonly<Record<string, string | undefined>>
  log: Logger
  say: (line: string) => void
  natsPort?: number
  redisPort?: number
  /** OB_NATS_STORE_MB in bytes: the embedded server's `max_file_store`. */
  storeBytes?: number
}): Promise<EmbeddedServices> {
  const natsPort = opts.natsPort ?? DEFAULT_NATS_PORT
  const redisPort = opts.redisPort ?? DEFAULT_REDIS_PORT
  const plan = planEmbedded({
    natsConfigured: opts.natsConfigured,
    redisConfigured: opts.redisConfigured,
    natsAnswers: !opts.natsConfigured && await answers(natsPort),
    redisAnswers: !opts.redisConfigured && await answers(redisPort)
  })
  const dataDir = resolve(opts.dataDir)
  const started: ManagedServer[] = []
  const stop = async (): Promise<void> => {
    for (const s of [...started].reverse()) await s.stop()
  }
  try {
    if (plan.nats) {
      started.push(await spawnNats({
        binary: ensureBinary('nats-server', opts.env, opts.say),
        dataDir,
        port: natsPort,
        log: opts.log,
        ...(opts.storeBytes !== undefined ? { storeBytes: opts.storeBytes } : {})
      }))
    }
    if (plan.redis) {
      started.push(await spawnRedis({ binary: ensureBinary('redis-server', opts.env, opts.say), dataDir, port: redisPort, log: opts.log }))
    }
  } catch (err) {
    await stop()
    throw err
  }
  return { started, stop }
}
