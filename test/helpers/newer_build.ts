import { cpSync, copyFileSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { QUEUED_FORMAT_VERSION } from '../../protocol/mod.ts'

/** This build's `dist/` (this module runs as dist/test/helpers/newer_build.js) and the project around it. */
const DIST = fileURLToPath(new URL('../../', import.meta.url))
const ROOT = join(DIST, '..')

export interface NewerBuild {
  /** The queued-message format the copy writes and reads: one above this build's. */
  readonly format: number
  readonly engineChild: string
  readonly gatewayChild: string
  dispose: () => void
}

/** Replaces the one occurrence of `from` in `file`, failing when there is not exactly one: the copy must differ as meant. */
function replaceOnce (file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8')
  const count = text.split(from).length - 1
  if (count !== 1) throw new Error(`${file}: expected "${from}" once, found it ${count} times; the newer build cannot be made`)
  writeFileSync(file, text.replace(from, to))
}

/**
 * A real "next release" for upgrade tests: a copy of this build's `dist/` in a temporary directory whose queued
 * message format is one above this build's (QUEUED_FORMAT_VERSION, the one constant both gateway and engine read),
 * and whose gateway writes one optional field this build does not know (`field`). Its engine and gateway run from
 * the copy's own test children (test/helpers/engine_child.ts, gateway_child.ts), with this project's node_modules.
 */
export function newerBuild (field: { name: string, value: string }): NewerBuild {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-newer-build-'))
  const dist = join(dir, 'dist')
  cpSync(DIST, dist, { recursive: true, filter: (src) => !src.endsWith('.map') && !src.startsWith(join(DIST, 'bench')) })
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json')) // "type": "module" for the copied .js files
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  const format = QUEUED_FORMAT_VERSION + 1
  replaceOnce(join(dist, 'protocol', 'queued_message.js'),
    `export const QUEUED_FORMAT_VERSION = ${QUEUED_FORMAT_VERSION};`, `export const QUEUED_FORMAT_VERSION = ${format};`)
  replaceOnce(join(dist, 'gateway', 'send', 'prepare.js'),
    'v: QUEUED_FORMAT_VERSION,', `v: QUEUED_FORMAT_VERSION, ${field.name}: ${JSON.stringify(field.value)},`)
  return {
    format,
    engineChild: join(dist, 'test', 'helpers', 'engine_child.js'),
    gatewayChild: join(dist, 'test', 'helpers', 'gateway_child.js'),
    dispose: () => rmSync(dir, { recursive: true, force: true })
  }
}
