import { spawn, type ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { binary } from '../servers.ts'
import { eventually } from '../waiting.ts'
import type { Host } from './net.ts'

/** Every process started on a host and not yet ended, so a dying test process ends them all (`exit` below). */
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const c of running) {
    try { c.kill('SIGKILL') } catch { /* gone */ }
  }
})

/** Ends (SIGKILL) every process still running on a host, whoever started it; resolves once all are gone. */
export async function stopAll (): Promise<void> {
  await Promise.all([...running].map(async (c) => {
    if (c.exitCode !== null || c.signalCode !== null) return
    await new Promise<void>((resolve) => { c.once('exit', () => resolve()); c.kill('SIGKILL') })
  }))
}

/**
 * One process on one host: `ip netns exec <ns> <command>`, which enters the namespace and then execs the
 * command, so the child's pid is the program's own (SIGSTOP and SIGCONT reach it directly).
 */
export class HostProcess {
  private constructor (readonly host: Host, readonly label: string, readonly child: ChildProcess) {}

  /**
   * Starts `command args` on `host` with exactly `env` (plus PATH and OB_TEST_LOG). Resolves once `ready` is met:
   * a line on stdout matching the pattern, or something listening on the host's address at the port.
   */
  static async start (
    host: Host, label: string, command: string, args: string[],
    opts: { env?: Record<string, string>, ready: RegExp | number, timeoutMs?: number, onLine?: (line: string) => void }
  ): Promise<HostProcess> {
    const log = process.env.OB_TEST_LOG
    const child = spawn(binary('ip'), ['netns', 'exec', host.ns, command, ...args], {
      env: { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/bin', ...(log !== undefined ? { OB_TEST_LOG: log } : {}), ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    running.add(child)
    child.once('exit', () => {
      running.delete(child)
      // a process it started may hold the pipes open after it ended; they must not keep the test process up
      setTimeout(() => { child.stdout?.destroy(); child.stderr?.destroy() }, 1000).unref()
    })
    let out = ''
    const keep = (b: Buffer): void => {
      out = (out + b.toString()).slice(-4000)
      if (log !== undefined) process.stderr.write(`[${label} ${host.name}] ${b.toString()}`)
    }
    child.stdout!.on('data', keep)
    if (opts.onLine !== undefined) {
      let partial = ''
      child.stdout!.on('data', (b: Buffer) => {
        const lines = (partial + b.toString()).split('\n')
        partial = lines.pop()!
        for (const l of lines) opts.onLine!(l)
      })
    }
    child.stderr!.on('data', keep)
    const p = new HostProcess(host, label, child)
    const exited = new Promise<never>((_resolve, reject) => {
      child.once('exit', (code, signal) => reject(new Error(`${label} on ${host.name} exited with ${code ?? signal}: ${out}`)))
    })
    exited.catch(() => {})
    const ready = opts.ready
    const timeoutMs = opts.timeoutMs ?? 30_000
    const waiting = typeof ready === 'number'
      ? waitForAddress(host.address, ready, timeoutMs)
      : eventually(() => ready.test(out), `${label} on ${host.name} to print ${String(ready)}`, timeoutMs, 50)
    try {
      await Promise.race([waiting, exited])
    } catch (err) {
      await p.stop()
      throw err
    }
    return p
  }

  get pid (): number {
    return this.child.pid!
  }

  get alive (): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** Freezes the process (SIGSTOP): it holds its sockets and memory but runs nothing, as a stalled VM does. */
  freeze (): void {
    this.child.kill('SIGSTOP')
  }

  thaw (): void {
    this.child.kill('SIGCONT')
  }

  /** SIGKILL by default; resolves once the process is gone. A frozen process is woken so a SIGTERM can act. */
  async stop (signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.alive) return
    const gone = new Promise<void>((resolve) => { this.child.once('exit', () => resolve()) })
    this.child.kill(signal)
    if (signal !== 'SIGKILL') this.child.kill('SIGCONT')
    await gone
  }
}

/** Resolves once something accepts TCP connections at `address:port` (seen from the root namespace). */
export async function waitForAddress (address: string, port: number, timeoutMs = 30_000): Promise<void> {
  const listening = async (): Promise<boolean> => await new Promise<boolean>((resolve) => {
    const s = connect({ host: address, port, timeout: 1000 })
    s.once('connect', () => { s.destroy(); resolve(true) })
    s.once('timeout', () => { s.destroy(); resolve(false) })
    s.once('error', () => resolve(false))
  })
  await eventually(listening, `something to listen on ${address}:${port}`, timeoutMs, 100)
}
