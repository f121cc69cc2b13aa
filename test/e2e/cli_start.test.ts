import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { fetch } from 'undici'
import { connect } from '@nats-io/transport-node'
import { ControlPlane } from '../../stores/control_plane/mod.ts'
import { ServerProcess } from '../helpers/servers.ts'
import { freePort } from '../helpers/ports.ts'
import { spawnCli, runCli, type CliRun } from '../helpers/cli.ts'
import { eventually } from '../helpers/waiting.ts'

let nats: ServerProcess
let redis: ServerProcess
before(async () => { [nats, redis] = await Promise.all([ServerProcess.nats(), ServerProcess.redis()]) })
after(async () => { await Promise.all([nats.dispose(), redis.dispose()]) })

async function waitHealthy (base: string, exited: () => CliRun | undefined): Promise<void> {
  await eventually(async () => {
    const run = exited()
    if (run !== undefined) {
      throw new Error(`outbox exited (${String(run.code ?? run.signal)}) before it became healthy: ` +
        `${run.stderr.slice(-2000)} ${run.stdout.slice(-2000)}`)
    }
    return (await fetch(base + '/healthz').catch(() => undefined))?.status === 200
  // a process start (config, NATS, Redis, streams, buckets, threads) takes seconds; on a loaded machine, more
  }, 'outbox to become healthy', 60_000)
}

test('start serves /healthz and /readyz, creates orgs whose key authenticates, and exits 0 on SIGTERM', async () => {
  const port = await freePort()
  const env = {
    NATS_URL: nats.url, REDIS_URL: redis.url, OB_HTTP_PORT: String(port), OB_SMTP_INBOUND_PORT: '0', OB_SMTP_SUBMISSION_PORT: '0',
    OB_SHUTDOWN_TIMEOUT_MS: '3000'
  }
  const run = spawnCli(['start'], env)
  let exited: CliRun | undefined
  void run.done.then((r) => { exited = r })
  const base = `http://127.0.0.1:${port}`
  try {
    await waitHealthy(base, () => exited)
    assert.equal((await fetch(base + '/readyz')).status, 200)

    const created = await runCli(['org', 'create', '--name', 'Acme', '--domain', 'acme-cli.test', '--plan', 'starter'],
      { NATS_URL: nats.url })
    assert.equal(created.code, 0, created.stderr)
    const org = JSON.parse(created.stdout.trim())
    assert.deepEqual(Object.keys(org).sort(), ['api_key', 'domain_id', 'organization_id'])
    assert.match(org.api_key, /^ob_live_/)

    // The key is stored only by hash, and the running process accepts it.
    const nc = await connect({ servers: nats.url })
    const cp = await ControlPlane.open(nc, { replicas: 1 })
    const record = cp.keyByValue(org.api_key)
    cp.close()
    await nc.close()
    assert.equal(record?.org_id, org.organization_id)
    assert.deepEqual(record?.permissions, ['admin'])
    const me = await eventually(async () => {
      const r = await fetch(base + '/v1/whoami', { headers: { authorization: `Bearer ${org.api_key}` } })
      return r.status === 200 ? r : undefined
    }, 'the new key to authenticate at the running process')
    assert.equal(me.status, 200)
    const body = await me.json() as Record<string, unknown>
    assert.equal(body.organization_id, org.organization_id)
    assert.equal(body.rate_limit_per_minute, 300)

    const again = await runCli(['org', 'create', '--name', 'Other', '--domain', 'acme-cli.test'], { NATS_URL: nats.url })
    assert.equal(again.code, 1)
    assert.match(again.stderr, /acme-cli\.test is already registered/)
  } finally {
    run.child.kill('SIGTERM')
  }
  const result = await run.done
  assert.equal(result.code, 0, result.stderr)
  assert.equal(result.signal, null)
  // what a new user reads once it listens: where the dashboard is, and the command to run next
  assert.match(result.stderr, new RegExp(`outbox: listening on ${base}; the dashboard is at ${base}/dashboard/`))
  assert.match(result.stderr, /npx outbox org create --name Acme --domain acme\.example --plan starter/)
})

test('a bad setting exits 1 with one line naming the variable and no stack trace', async () => {
  const r = await runCli(['start'], { NATS_URL: nats.url, REDIS_URL: redis.url, OB_HTTP_PORT: '99999' })
  assert.equal(r.code, 1)
  const lines = r.stderr.trim().split('\n')
  assert.equal(lines.length, 1, r.stderr)
  assert.match(lines[0]!, /OB_HTTP_PORT/)
  assert.doesNotMatch(r.stderr, /\n\s+at /)
})

test('org create: usage errors exit 2, an unreachable NATS exits 1 with one clear line', async () => {
  const usage = await runCli(['org', 'create', '--name', 'NoDomain'], { NATS_URL: nats.url })
  assert.equal(usage.code, 2)
  assert.match(usage.stderr, /usage: outbox org create/)
  const silent = await freePort()
  const unreachable = await runCli(['org', 'create', '--name', 'A', '--domain', 'a-cli.test'], { NATS_URL: `nats://127.0.0.1:${silent}` })
  assert.equal(unreachable.code, 1)
  assert.match(unreachable.stderr.trim(), /^outbox: no NATS server answers at nats:\/\/127\.0\.0\.1:\d+/)
  const unknown = await runCli(['frobnicate'], {})
  assert.equal(unknown.code, 2)
  const help = await runCli(['--help'], {})
  assert.equal(help.code, 0)
  assert.match(help.stdout, /outbox org create/)
})

test('start exits 1 with one line naming NATS when NATS_URL points at nothing', async () => {
  const silent = await freePort()
  const r = await runCli(['start'], { NATS_URL: `nats://127.0.0.1:${silent}`, REDIS_URL: redis.url, OB_HTTP_PORT: '0' })
  assert.equal(r.code, 1)
  assert.match(r.stderr.trim(), new RegExp(`^outbox: no NATS server answers at nats://127\\.0\\.0\\.1:${silent}`))
  assert.doesNotMatch(r.stderr, /\n\s+at /)
})

test('OB_ROLE=engine runs without the HTTP API and still exits 0 on SIGTERM', async () => {
  const port = await freePort()
  const run = spawnCli(['start'], {
    NATS_URL: nats.url, REDIS_URL: redis.url, OB_ROLE: 'engine', OB_HTTP_PORT: String(port), OB_METRICS_PORT: '0', OB_LOG_LEVEL: 'info'
  })
  let out = ''
  run.child.stdout!.on('data', (d: Buffer) => { out += d.toString() })
  await eventually(() => out.includes('outbox started'), 'the start line')
  assert.match(out, /"role":"engine"/)
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), 'no HTTP API in the engine role')
  run.child.kill('SIGTERM')
  const result = await run.done
  assert.equal(result.code, 0, result.stderr)
  assert.match(result.stdout, /"msg":"stopped"/)
})
