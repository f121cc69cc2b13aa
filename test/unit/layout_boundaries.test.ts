import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The folder boundaries of docs/architecture.md, read from the TypeScript sources. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** Modules that open connections, sockets, servers or processes: none may reach protocol/. */
const STATEFUL = new Set([
  'ioredis', '@nats-io/transport-node', '@nats-io/nats-core', 'undici', 'nodemailer', 'smtp-server', 'uWebSockets.js', 'piscina',
  'node:net', 'node:tls', 'node:http', 'node:https', 'node:http2', 'node:dgram', 'node:dns', 'node:child_process', 'node:worker_threads'
])
/** `node:net` offers one pure function the content rules and client identity use; nothing else of it is allowed. */
const PURE_NAMES: Record<string, Set<string>> = { 'node:net': new Set(['isIP']) }

interface Import { specifier: string, names: string[], typeOnly: boolean }

function sourcesUnder (dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) out.push(...sourcesUnder(path))
    else if (entry.name.endsWith('.ts')) out.push(path)
  }
  return out
}

function importsOf (file: string): Import[] {
  const src = readFileSync(join(ROOT, file), 'utf8')
  const out: Import[] = []
  const statements = [
    ...src.matchAll(/^import\s+(type\s+)?([^'";]*?)\s*(?:from\s+)?'([^']+)'/gm),
    ...src.matchAll(/^export\s+(type\s+)?(\{[^}]*\}|\*(?:\s+as\s+[\w$]+)?)\s*from\s+'([^']+)'/gm)
  ]
  for (const m of statements) {
    const clause = m[2] ?? ''
    const names = [...clause.matchAll(/(?:^|[{,])\s*(type\s+)?([A-Za-z_$][\w$]*)/g)].filter((n) => n[1] === undefined).map((n) => n[2]!)
    const allTyped = clause.startsWith('{') && names.length === 0
    out.push({ specifier: m[3]!, names, typeOnly: m[1] !== undefined || allTyped })
  }
  return out
}

const resolveFrom = (file: string, specifier: string): string => relative(ROOT, resolve(ROOT, dirname(file), specifier))

test('protocol/ imports nothing that opens a connection, and nothing outside itself at run time', () => {
  const files = sourcesUnder('protocol')
  assert.ok(files.length > 10, 'protocol/ sources found')
  for (const file of files) {
    for (const imp of importsOf(file)) {
      if (imp.typeOnly) continue
      if (imp.specifier.startsWith('.')) {
        const target = resolveFrom(file, imp.specifier)
        assert.ok(target.startsWith('protocol/'), `${file} imports ${target} at run time`)
        continue
      }
      if (!STATEFUL.has(imp.specifier)) continue
      const allowed = PURE_NAMES[imp.specifier]
      assert.ok(allowed !== undefined && imp.names.length > 0 && imp.names.every((n) => allowed.has(n)),
        `${file} imports ${imp.specifier} (${imp.names.join(', ') || 'whole module'})`)
    }
  }
})

test('the gateway imports no file under engine/, and the engine none under gateway/', () => {
  for (const [from, forbidden] of [['gateway', 'engine/'], ['engine', 'gateway/']] as const) {
    for (const file of sourcesUnder(from)) {
      for (const imp of importsOf(file)) {
        if (!imp.specifier.startsWith('.')) continue
        const target = resolveFrom(file, imp.specifier)
        assert.ok(!target.startsWith(forbidden), `${file} imports ${target}`)
      }
    }
  }
})

test('shared stores import neither the gateway nor the engine', () => {
  for (const file of sourcesUnder('stores')) {
    for (const imp of importsOf(file)) {
      if (!imp.specifier.startsWith('.')) continue
      const target = resolveFrom(file, imp.specifier)
      assert.ok(!target.startsWith('gateway/') && !target.startsWith('engine/'), `${file} imports ${target}`)
    }
  }
})

test('outside its folder, protocol/ and each store are imported only through a mod.ts', () => {
  const folderOf = (path: string): string | undefined => path.startsWith('protocol/') ? 'protocol' : /^stores\/[a-z_]+/.exec(path)?.[0]
  for (const dir of ['gateway', 'engine', 'stores', 'cli', 'bench', 'scripts', 'config']) {
    for (const file of sourcesUnder(dir)) {
      for (const imp of importsOf(file)) {
        if (!imp.specifier.startsWith('.')) continue
        const target = resolveFrom(file, imp.specifier)
        const folder = folderOf(target)
        if (folder === undefined || folder === folderOf(file)) continue
        // a sub-folder with its own mod.ts (protocol/content_rules/) is an entry point of its own
        assert.ok(target.startsWith(`${folder}/`) && target.endsWith('/mod.ts'), `${file} imports ${target}`)
      }
    }
  }
})
