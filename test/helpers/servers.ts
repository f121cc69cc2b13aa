import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { existsSync } from 'node:fs'
import { freePort, waitForPort } from './ports.ts'

/**
 * A real nats-server or redis-server of the test's own, on a free port with a temporary data directory.
 * Fault tests kill and restart these; the machine's own services are never touched.
 */
/** Debian puts nats-server in /usr/sbin, which a non-login PATH may lack. */
export function binary (name: string): string {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/bin', '/usr/local/bin'])) {
    if (dir !== '' && existsSync(join(dir, name))) return join(dir, name)
  }
  return name
}

export class ServerProcess {
  private child?: ChildProcess
  readonly dir: string

  /** A nats-server left at its own 1 MB `max_payload`, as one an operator already runs; set by `nats({ stockMaxPayload })`. */
  private stockMaxPayload = false
  /**
   * nats-server only: JetStream's `max_file_store` (bytes) for the next starts; undefined leaves the server's own.
   * A limit below what the store holds makes every write to a stream fail (`insufficient resources`): a full disk.
   */
  maxFileStore?: number

  private constructor (readonly kind: 'nats' | 'redis', readonly port: number, private readonly extraArgs: string[]) {
    this.dir = mkdtempSync(join(tmpdir(), `outbox-${kind}-`))
  }

  static async nats (
    opts: { port?: number, args?: string[], stockMaxPayload?: boolean, maxFileStore?: number } = {}
  ): Promise<ServerProcess> {
    const s = new ServerProcess('nats', opts.port ?? await freePort(), opts.args ?? [])
    s.stockMaxPayload = opts.stockMaxPayload === true
    if (opts.maxFileStore !== undefined) s.maxFileStore = opts.maxFileStore
    await s.start()
    return s
  }

  static async redis (opts: { port?: number, args?: string[] } = {}): Promise<ServerProcess> {
    const s = new ServerProcess('redis', opts.port ?? await freePort(), opts.args ?? [])
    await s.start()
    return s
  }

  /** The server's process id while it runs (benchmarks read its CPU time from /proc). */
  get pid (): number | undefined {
    return this.child?.pid
  }

  get url (): string {
    return this.kind === 'nats' ? `nats://127.0.0.1:${this.port}` : `redis://127.0.0.1:${this.port}`
  }

  /** As Outbox's embedded server: 10 MB send bodies need a larger max_payload than the 1 MB default. */
  private natsConfig (): string {
    const file = join(this.dir, 'nats.conf')
    const limit = this.maxFileStore === undefined ? '' : `jetstream { max_file_store: ${this.maxFileStore} }\n`
    writeFileSync(file, (this.stockMaxPayload ? '' : 'max_payload: 12MB\n') + limit)
    return file
  }

  async start (): Promise<void> {
    const [cmd, args] = this.kind === 'nats'
      ? [binary('nats-server'), [
          '-c', this.natsConfig(), '-js', '-a', '127.0.0.1', '-p', String(this.port), '-sd', this.dir, ...this.extraArgs
        ]]
      : [binary('redis-server'), [
          '--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--maxmemory-policy', 'noeviction',
          '--dir', this.dir, ...this.extraArgs
        ]]
    this.child = spawn(cmd, args, { stdio: 'ignore' })
    const child = this.child
    await Promise.race([
      waitForPort(this.port),
      new Promise((_resolve, reject) => child.once('exit', (code) => reject(new Error(`${cmd} exited with ${code}`))))
    ])
  }

  /** SIGKILL by default: the server gets no chance to flush, as in a crash. */
  async stop (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve())
      child.kill(signal)
    })
    this.child = undefined
  }

  async restart (): Promise<void> {
    await this.stop()
    await this.start()
  }

  async dispose (): Promise<void> {
    await this.stop()
    rmSync(this.dir, { recursive: true, force: true })
  }
}
