import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { ServerProcess } from '../../helpers/servers.ts'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { spawnCli, type CliRun } from '../../helpers/cli.ts'
import { freePort } from '../../helpers/ports.ts'
import type { ChildProcess } from 'node:child_process'
import { nothingPending, sendBody, sleep, untilDelivered, untilNothingPending } from './fault_env.ts'
import { eventually } from '../../helpers/waiting.ts'

interface Sent { startedAt: number, status: number, id?: string, error?: string }

let nats: ServerProcess
let redis: ServerProcess
let sink: SmtpSink
let admin: TestOutbox
let org: TestOrg
let key: string
let port: number
const children: ChildProcess[] = []

/** One request on its own TCP connection, so a refused connection and a dropped one cannot be confused. */
async function post (body: Record<string, unknown>): Promise<Sent> {
  const startedAt = Date.now()
  const payload = JSON.stringify(body)
  return await new Promise((resolve) => {
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/v1/messages/send', agent: false, headers }, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => { text += c.toString() })
      res.on('end', () => {
        let id: string | undefined
        try { id = (JSON.parse(text) as { id?: string }).id } catch { id = undefined }
        resolve({ startedAt, status: res.statusCode ?? 0, ...(res.statusCode === 202 && id !== undefined ? { id } : {}) })
      })
      res.on('error', (err) => resolve({ startedAt, status: 0, error: (err as NodeJS.ErrnoException).code ?? err.message }))
    })
    req.on('error', (err) => resolve({ startedAt, status: 0, error: (err as NodeJS.ErrnoException).code ?? err.message }))
    req.setTimeout(15_000, () => req.destroy(new Error('timeout')))
    req.end(payload)
  })
}

function startCli (): { child: ChildProcess, done: Promise<CliRun> } {
  const run = spawnCli(['start'], {
    NATS_URL: nats.url, REDIS_URL: redis.url, OB_ROLE: 'all', OB_HTTP_PORT: String(port), OB_SMTP_INBOUND_PORT: '0',
    OB_SMTP_SUBMISSION_PORT: '0', OB_SMTP_RELAY: sink.url, OB_DOMAIN_VERIFICATION: 'off', OB_SHUTDOWN_TIMEOUT_MS: '8000',
    OB_ENGINE_ACK_WAIT_MS: '2000'
  })
  children.push(run.child)
  return run
}

async function untilServing (): Promise<void> {
  await eventually(async () => (await post(sendBody(org, 'probe@dest.example', { headers: {} })).catch(() => undefined))?.status === 202,
    'outbox start to accept sends', 20_000, 100)
}

before(async () => {
  nats = await ServerProcess.nats()
  redis = await ServerProcess.redis()
  sink = await SmtpSink.start({ keepRaw: false })
  port = await freePort()
  // Writes the organisation and key to the control plane the started process mirrors.
  admin = await TestOutbox.start({ nats, redis, env: { OB_ROLE: 'gateway' } })
  org = await admin.org()
  key = await admin.key(org, ['send'])
})
after(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
  await admin.close()
  await sink.close()
  await nats.dispose()
  await redis.dispose()
})

test('SIGTERM under send load: requests in flight are answered, exit 0, every 202 delivered ' +
  'after a restart', { timeout: 90_000 }, async (t) => {
  const first = startCli()
  await untilServing()
  const results: Sent[] = []
  let running = true
  let n = 0
  const senders = Array.from({ length: 8 }, async () => {
    while (running) {
      const r = await post(sendBody(org, `g${n++}@dest.example`))
      results.push(r)
      if (r.status === 0) await sleep(20) // the listener is gone; keep knocking until the test stops
    }
  })
  await eventually(() => results.filter((r) => r.status === 202).length >= 100, '100 sends accepted', 60_000)
  const termAt = Date.now()
  first.child.kill('SIGTERM')
  const exit = await first.done
  running = false
  await Promise.all(senders)
  assert.equal(exit.code, 0, exit.stderr)
  assert.equal(exit.signal, null)

  const before = results.filter((r) => r.startedAt < termAt)
  const afterTerm = results.filter((r) => r.startedAt >= termAt)
  const tally = (rs: Sent[]): string => JSON.stringify([
    ...rs.reduce((m, r) => m.set(r.error ?? r.status, (m.get(r.error ?? r.status) ?? 0) + 1), new Map<unknown, number>())
  ])
  t.diagnostic(`started before SIGTERM: ${tally(before)}; after: ${tally(afterTerm)}`)
  for (const r of before) assert.ok(r.status === 202 || r.status === 503, `a request in flight at SIGTERM got ${r.status} ${r.error ?? ''}`)
  // A connection still in the kernel's accept queue when the listener closes is reset rather than refused: its
  // request never reached the server, so for the client it is the same as a refused connection.
  for (const r of afterTerm) {
    assert.ok(r.status === 202 || r.status === 503 || r.error === 'ECONNREFUSED' || r.error === 'ECONNRESET',
      `after SIGTERM: ${r.status} ${r.error ?? ''}`)
  }

  const ids = results.filter((r) => r.status === 202).map((r) => r.id!)
  const second = startCli()
  try {
    await untilServing()
    await untilDelivered(sink, org, ids, 60_000)
    const state = await untilNothingPending(nats.url)
    assert.ok(nothingPending(state), JSON.stringify(state))
  } finally {
    second.child.kill('SIGTERM')
  }
  assert.equal((await second.done).code, 0)
})
