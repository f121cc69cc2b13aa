import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import type { InternalErrorCode } from '../protocol/mod.ts'

/** A failure the CLI reports as one line and exit code 1, without a stack trace. */
export class CliError extends Error {
  readonly code = 'cli_error' satisfies InternalErrorCode
  constructor (message: string, readonly exitCode = 1) {
    super(message)
    this.name = 'CliError'
  }
}

/** Debian installs nats-server in /usr/sbin, which a non-login PATH often lacks. */
const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/usr/local/bin', '/usr/bin', '/sbin']

export function findBinary (name: string, path: string): string | undefined {
  for (const dir of path.split(':').concat(EXTRA_DIRS)) {
    if (dir !== '' && existsSync(join(dir, name))) return join(dir, name)
  }
  return undefined
}

export type InstallPlan = { action: 'use', path: string } | { action: 'install', command: string[] } | { action: 'refuse', message: string }

/** What to do about a server binary: use it, install its Debian package (root with apt-get), or stop with one line. */
export function planBinary (input: { name: string, found?: string, isRoot: boolean, hasAptGet: boolean }): InstallPlan {
  if (input.found !== undefined) return { action: 'use', path: input.found }
  if (input.isRoot && input.hasAptGet) return { action: 'install', command: ['apt-get', 'install', '-y', input.name] }
  const variable = input.name === 'nats-server' ? 'NATS_URL' : 'REDIS_URL'
  return {
    action: 'refuse',
    message: `outbox: ${input.name} not found; install the Debian package: apt-get install -y ${input.name} ` +
      `(or set ${variable} to a running server)`
  }
}

/** The binary's path, installing its Debian package first when that is possible; says so in one line. */
export function ensureBinary (
  name: 'nats-server' | 'redis-server', env: Readonly<Record<string, string | undefined>>, say: (line: string) => void
): string {
  const path = env.PATH ?? ''
  const plan = planBinary({
    name,
    found: findBinary(name, path),
    isRoot: process.getuid?.() === 0,
    hasAptGet: findBinary('apt-get', path) !== undefined
  })
  if (plan.action === 'use') return plan.path
  if (plan.action === 'refuse') throw new CliError(plan.message)
  say(`outbox: installing ${name} (${plan.command.join(' ')})`)
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' }
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env: aptEnv })
    execFileSync('apt-get', ['install', '-y', '-qq', name], { stdio: 'ignore', env: aptEnv })
  } catch {
    throw new CliError(`outbox: installing ${name} with apt-get failed; install the Debian package ${name} and start again`)
  }
  const installed = findBinary(name, path)
  if (installed === undefined) throw new CliError(`outbox: ${name} is still not found after apt-get install ${name}`)
  return installed
}

/** `nats-server: v2.9.10` → [2, 9, 10]; unknown output → [0, 0, 0]. */
export function parseNatsVersion (output: string): [number, number, number] {
  const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(output)
  return m === null ? [0, 0, 0] : [Number(m[1]), Number(m[2]), Number(m[3])]
}

/** `sync_interval: always` (fsync before every acknowledgement) exists from nats-server 2.10 on. */
export function supportsSyncAlways (version: readonly number[]): boolean {
  return version[0]! > 2 || (version[0] === 2 && version[1]! >= 10)
}
