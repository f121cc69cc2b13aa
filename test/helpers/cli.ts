import { spawn, type ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The built CLI, run as a user runs it: `node dist/cli/main.js …`. */
export const CLI_MAIN = fileURLToPath(new URL('../../cli/main.js', import.meta.url))

export interface CliRun { code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string }

/**
 * Only what the CLI needs from this process's environment, so the test's own settings never leak in. SMTP
 * submission is off unless a test names its port: its fixed default port would collide between processes.
 */
export function cliEnv (env: Record<string, string>): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', OB_LOG_LEVEL: 'warn', OB_SMTP_SUBMISSION_PORT: '0', ...env
  }
}

/** `nodeArgs`: flags for node itself, before the script (`--cpu-prof`, which NODE_OPTIONS does not accept). */
export function spawnCli (
  args: string[], env: Record<string, string>, nodeArgs: string[] = []
): { child: ChildProcess, done: Promise<CliRun> } {
  const child = spawn(process.execPath, [...nodeArgs, CLI_MAIN, ...args], { env: cliEnv(env), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.on('data', (d: Buffer) => { stdout += d.toString() })
  child.stderr!.on('data', (d: Buffer) => { stderr += d.toString() })
  const done = new Promise<CliRun>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal, stdout, stderr })))
  return { child, done }
}

export async function runCli (args: string[], env: Record<string, string>): Promise<CliRun> {
  return await spawnCli(args, env).done
}
