import { spawn, type ChildProcess } from 'node:child_process'
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
