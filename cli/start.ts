import { pino, type Logger } from 'pino'
import { loadConfig } from '../config/mod.ts'
import { startOutbox, type OutboxProcess } from './outbox_process.ts'
import { startEmbeddedServices, type EmbeddedServices } from './embedded_services.ts'

/** Grace on top of OB_SHUTDOWN_TIMEOUT_MS for closing NATS, Redis and the embedded servers. */
const CLOSE_GRACE_MS = 5_000

/**
 * `outbox start`: the embedded servers when needed, then the parts OB_ROLE names. The first SIGTERM or
 * SIGINT drains in order and exits 0; a second one exits at once.
 */
export async function runStart (env: Readonly<Record<string, string | undefined>>, say: (line: string) => void): Promise<void> {
  const config = loadConfig(env)
  // Synchronous writes: the last lines before exit (shutdown, errors) must not be lost in a buffer.
  const log: Logger = pino({ level: config.logLevel, base: { role: config.role } }, pino.destination({ dest: 1, sync: true }))
  let embedded: EmbeddedServices | undefined
  let proc: OutboxProcess | undefined
  let starting: Promise<unknown> = Promise.resolve()
  let stopping = false

  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting without draining')
      process.exit(1)
    }
    stopping = true
    log.info({ signal, timeoutMs: config.shutdownTimeoutMs }, 'shutting down: draining')
    setTimeout(() => {
      log.error('shutdown deadline passed; exiting')
      process.exit(1)
    }, config.shutdownTimeoutMs + CLOSE_GRACE_MS).unref()
    await starting.catch(() => {})
    let clean = true
    await proc?.stop().catch((err: unknown) => { clean = false; log.error({ err }, 'a part failed to stop cleanly') })
    await embedded?.stop().catch((err: unknown) => { clean = false; log.error({ err }, 'an embedded server failed to stop cleanly') })
    log.info('stopped')
    process.exit(clean ? 0 : 1)
  }
  process.on('SIGTERM', () => { void shutdown('SIGTERM') })
  process.on('SIGINT', () => { void shutdown('SIGINT') })

  const start = async (): Promise<void> => {
    embedded = await startEmbeddedServices({
      natsConfigured: config.nats.configured,
      redisConfigured: config.redis.configured,
      dataDir: config.dataDir,
      storeBytes: config.nats.storeBytes,
      env,
      log,
      say
    })
    if (stopping) return
    proc = await startOutbox(config, log)
    log.info({ port: proc.gateway?.port }, 'outbox started')
    if (proc.gateway !== undefined) for (const line of nextSteps(config.http.host, proc.gateway.port)) say(line)
  }
  starting = start()
  try {
    await starting
  } catch (err) {
    await embedded?.stop().catch(() => {})
    throw err
  }
}

/** What a new user does next, printed once the gateway listens (on stderr, beside the log lines on stdout). */
export function nextSteps (host: string, port: number): string[] {
  const shown = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host
  const base = `http://${shown}:${port}`
  return [
    `outbox: listening on ${base}; the dashboard is at ${base}/dashboard/`,
    'outbox: next, create an organisation with a domain and an admin key (sign in to the dashboard with the key):',
    'outbox:   npx outbox org create --name Acme --domain acme.example --plan starter'
  ]
}
