import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request, type IncomingMessage } from 'node:http'
import type { ChildProcess } from 'node:child_process'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { spawnCli } from '../../helpers/cli.ts'
import { freePort } from '../../helpers/ports.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * A streamed answer (the suppression export, about 16 MB) to a client that stops reading for a while: the gateway
 * holds the rest back and sends it as the client reads again, whether it is idle or shutting down, and a shutdown
 * waits for it.
 */
const ENTRIES = 100_000

let nats: ServerProcess
let redis: ServerProcess
let admin: TestOutbox
let org: TestOrg
let port: number
const children: ChildProcess[] = []

// The shutdown timeout is far above what the export takes (well under a second on a quiet machine), so that a loaded
// machine still ends it: the test is of waiting, not of speed.
const SHUTDOWN_TIMEOUT_MS = 90_000

let run: ReturnType<typeof spawnCli>

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  port = await freePort()
  admin = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  org = await admin.org()
  run = spawnCli(['start'], {
    NATS_URL: nats.url, REDIS_URL: redis.url, OB_ROLE: 'gateway', OB_HTTP_PORT: String(port), OB_SMTP_INBOUND_PORT: '0',
    OB_SMTP_SUBMISSION_PORT: '0', OB_DOMAIN_VERIFICATION: 'off', OB_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS)
  })
  children.push(run.child)
  await eventually(async () => (await call('GET', '/v1/suppressions?limit=1').catch(() => undefined))?.status === 200,
    'outbox start to answer', 20_000, 100)
  // about 16 MB of CSV, more than the kernel's socket buffers on loopback hold
  const domain = 'a-domain-long-enough-for-an-export-larger-than-socket-buffers.example'
  const rows = Array.from({ length: ENTRIES }, (_v, i) => `slow-reader-${String(i).padStart(6, '0')}-${'x'.repeat(40)}@${domain}`)
  const imported = await call('POST', '/v1/suppressions/import', `email\n${rows.join('\n')}\n`)
  assert.equal(imported.status, 200, imported.text)
  assert.equal(JSON.parse(imported.text).imported, ENTRIES, imported.text.slice(0, 500))
  const listed = async (): Promise<boolean> => (await call('GET', '/v1/suppressions?limit=1')).text.includes('slow-reader-')
  await eventually(listed, 'the import to be listed', 20_000)
})
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  await admin.close()
  await nats.dispose()
  await redis.dispose()
})

async function call (method: string, path: string, body?: string): Promise<{ status: number, text: string }> {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { authorization: `Bearer ${org.adminKey}`, ...(body !== undefined ? { 'content-type': 'text/csv' } : {}) },
    ...(body !== undefined ? { body } : {})
  })
  return { status: r.status, text: await r.text() }
}

/** The export, read up to its first bytes and then paused: the rest waits in the gateway, held back by the socket. */
async function pausedExport (): Promise<{ res: IncomingMessage, ended: Promise<string>, lines: () => string[] }> {
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const headers = { authorization: `Bearer ${org.adminKey}` }
    const req = request({ host: '127.0.0.1', port, path: '/v1/suppressions/export', agent: false, headers }, resolve)
    req.on('error', reject)
    req.end()
  })
  assert.equal(res.statusCode, 200)
  const chunks: Buffer[] = []
  const ended = new Promise<string>((resolve, reject) => {
    res.on('data', (c: Buffer) => chunks.push(c))
    res.on('end', () => resolve('end'))
    res.on('aborted', () => resolve('aborted'))
    res.on('error', reject)
  })
  await new Promise((resolve) => res.once('data', resolve))
  res.pause()
  return { res, ended, lines: () => Buffer.concat(chunks).toString('utf8').split('\n').filter((l) => l !== '') }
}

function assertWhole (lines: string[], ending: string): void {
  assert.equal(ending, 'end', `the answer ended with ${ending} after ${lines.length} lines`)
  assert.equal(lines.length, ENTRIES + 1)
  assert.match(lines.at(-1)!, /^slow-reader-099999-/)
}

test('a client that stops reading an export for a while and goes on gets every row from an otherwise idle gateway', {
  timeout: 120_000
}, async (t) => {
  const { res, ended, lines } = await pausedExport()
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const resumed = Date.now()
  res.resume()
  // a hang, not a speed: the rest takes well under a second; before, it waited for an unrelated event, or forever
  const ending = await Promise.race([ended, new Promise<string>((resolve) => setTimeout(() => resolve('nothing for 60 s'), 60_000))])
  t.diagnostic(`the answer ended (${ending}) ${Date.now() - resumed} ms after the client read again`)
  if (ending !== 'end') res.destroy()
  assertWhole(lines(), ending)
})

test('a shutdown waits for a streamed export to end: the client reading it slowly gets every row', { timeout: 240_000 }, async (t) => {
  const { res, ended, lines } = await pausedExport()
  run.child.kill('SIGTERM')
  const stopped = Date.now()
  await new Promise((resolve) => setTimeout(resolve, 1500))
  assert.equal(run.child.exitCode, null, 'the process waits for the answer still being written')
  res.resume()
  const ending = await ended
  t.diagnostic(`the answer ended (${ending}) ${Date.now() - stopped} ms after SIGTERM, with ${lines().length} lines`)
  assertWhole(lines(), ending)
  const exit = await run.done
  assert.equal(exit.code, 0, exit.stderr)
})
