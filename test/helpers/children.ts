import { spawn, type ChildProcess } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

export const ENGINE_CHILD = fileURLToPath(new URL('./engine_child.js', import.meta.url))
export const GATEWAY_CHILD = fileURLToPath(new URL('./gateway_child.js', import.meta.url))

export interface Child { process: ChildProcess, port?: number }

/** Spawns a role child with exactly `env` (plus PATH) and resolves once it printed `ready`. */
export async function spawnChild (script: string, env: Record<string, string>): Promise<Child> {
  const log = process.env.OB_TEST_LOG
  const c = spawn(process.execPath, [script], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...(log !== undefined ? { OB_TEST_LOG: log } : {}), ...env },
    stdio: ['ignore', 'pipe', 'inherit']
  })
  if (log !== undefined) c.stdout!.on('data', (b: Buffer) => process.stderr.write(b)) // the child logs to stdout
  return await new Promise<Child>((resolve, reject) => {
    let out = ''
    c.stdout!.on('data', (b: Buffer) => {
      out += b.toString()
      const m = /ready(?: (\d+))?\n/.exec(out)
      if (m !== null) resolve({ process: c, ...(m[1] !== undefined ? { port: Number(m[1]) } : {}) })
    })
    c.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)))
  })
}

/** SIGKILL (a crash) or SIGTERM (a drain), resolving once the child is gone. */
export async function stopChild (c: Child, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (c.process.exitCode !== null || c.process.signalCode !== null) return
  await new Promise<void>((resolve) => { c.process.once('exit', () => resolve()); c.process.kill(signal) })
}

/**
 * The local ports of process `pid`'s TCP connections to `remotePort` on this machine (Linux: its descriptors in
 * /proc/<pid>/fd and the socket table in /proc/<pid>/net/tcp), so a test can tell its sessions at a server from
 * other clients'.
 */
export function tcpClientPorts (pid: number, remotePort: number): number[] {
  const inodes = new Set<string>()
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))
      if (m !== null) inodes.add(m[1]!)
    } catch { /* closed meanwhile */ }
  }
  const ports: number[] = []
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/)
      if (f.length < 10 || !inodes.has(f[9]!)) continue
      if (parseInt(f[2]!.split(':')[1]!, 16) === remotePort) ports.push(parseInt(f[1]!.split(':')[1]!, 16))
    }
  }
  return ports
}
