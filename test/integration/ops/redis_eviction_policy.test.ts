import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { Redis } from 'ioredis'
import { ServerProcess } from '../../helpers/servers.ts'
import { spawnCli } from '../../helpers/cli.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { TestOutbox } from '../../helpers/outbox.ts'
import { redisEvictionPolicy } from '../../../stores/clients/mod.ts'

/**
 * Outbox refuses a Redis that may evict keys (docs/operations.md "Redis must not evict"): every role at its start,
 * also when the Redis refuses CONFIG (as managed services do) and the policy is read from INFO; and a policy changed
 * while it runs is reported by `outbox_redis_noeviction`.
 */

/** `outbox start`; one that is still running after a minute (it accepted the Redis) is stopped and reported so. */
async function startCli (redis: ServerProcess, nats: ServerProcess, role: string): Promise<{ code: number | null, stderr: string }> {
  const { child, done } = spawnCli(['start'], {
    NATS_URL: nats.url, REDIS_URL: redis.url, OB_ROLE: role, OB_HTTP_PORT: '0', OB_SMTP_INBOUND_PORT: '0', OB_METRICS_PORT: '0'
  })
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  try {
    return await done
  } finally {
    clearTimeout(timer)
  }
}

test('every role refuses to start on a Redis with maxmemory-policy volatile-lru, naming the policy and the fix', async () => {
  const nats = await ServerProcess.nats()
  const redis = await ServerProcess.redis({ args: ['--maxmemory', '100mb', '--maxmemory-policy', 'volatile-lru'] })
  try {
    for (const role of ['all', 'gateway', 'engine', 'inbound']) {
      const run = await startCli(redis, nats, role)
      assert.equal(run.code, 1, `${role}: exit code (${run.stderr})`)
      assert.match(run.stderr, /^outbox: Redis at .* runs with maxmemory-policy volatile-lru; Outbox needs noeviction/m, role)
      assert.doesNotMatch(run.stderr, /\n\s+at /, `${role}: no stack trace`)
    }
  } finally {
    await redis.dispose()
    await nats.dispose()
  }
})

test('a Redis that refuses CONFIG is judged by INFO memory: allkeys-lru refused, noeviction accepted', async () => {
  const nats = await ServerProcess.nats()
  const evicting = await ServerProcess.redis({ args: ['--maxmemory-policy', 'allkeys-lru', '--rename-command', 'CONFIG', '""'] })
  const fine = await ServerProcess.redis({ args: ['--rename-command', 'CONFIG', '""'] })
  const probe = new Redis(fine.url)
  try {
    await assert.rejects(probe.config('GET', 'maxmemory-policy'), /unknown command/i, 'CONFIG is refused')
    assert.equal(await redisEvictionPolicy(probe), 'noeviction')
    const run = await startCli(evicting, nats, 'gateway')
    assert.equal(run.code, 1, run.stderr)
    assert.match(run.stderr, /runs with maxmemory-policy allkeys-lru; Outbox needs noeviction/)
    const ob = await TestOutbox.start({ nats, redis: fine })
    try {
      assert.equal(ob.proc.evictionPolicy.ok, true)
    } finally {
      await ob.close()
    }
  } finally {
    probe.disconnect()
    await evicting.dispose()
    await fine.dispose()
    await nats.dispose()
  }
})

test('a policy changed while running is logged and reported by outbox_redis_noeviction; an outage keeps the last reading', async () => {
  const lines: Array<{ level: number, msg: string, policy?: string }> = []
  const stream = new Writable({ write (chunk, _enc, cb) { lines.push(JSON.parse(String(chunk))); cb() } })
  const ob = await TestOutbox.start({ env: { OB_REDIS_POLICY_CHECK_MS: '100' }, log: { level: 'info', stream } })
  const admin = new Redis(ob.redisServer.url)
  const gauge = async (): Promise<string | undefined> => /^outbox_redis_noeviction (\d)$/m.exec(await ob.proc.metrics.render())?.[1]
  try {
    assert.equal(await gauge(), '1')
    assert.equal(ob.proc.evictionPolicy.ok, true)
    await admin.config('SET', 'maxmemory-policy', 'volatile-lru')
    await eventually(async () => await gauge() === '0', 'gauge drops to 0')
    assert.equal(ob.proc.evictionPolicy.ok, false)
    assert.equal(ob.proc.evictionPolicy.policy, 'volatile-lru')
    const errors = lines.filter((l) => l.level === 50 && l.policy === 'volatile-lru')
    assert.equal(errors.length, 1, 'one error line per change')
    assert.match(errors[0]!.msg, /maxmemory-policy volatile-lru; it must be noeviction/)
    admin.disconnect()
    await ob.redisServer.stop()
    await nothingHappensFor(1000) // the gauge must not change while Redis is away
    assert.equal(await gauge(), '0', 'Redis away: the last reading stands')
    assert.equal(ob.proc.evictionPolicy.ok, false)
    await ob.redisServer.start() // started with noeviction, as the helper starts it
    await eventually(async () => await gauge() === '1', 'gauge back to 1')
    assert.equal(ob.proc.evictionPolicy.ok, true)
    assert.ok(lines.some((l) => l.level === 30 && /noeviction again/.test(l.msg)))
  } finally {
    admin.disconnect()
    await ob.close()
  }
})

test('a full Redis with noeviction refuses writes, and a send answers 503 with Retry-After, then flows again', async () => {
  const ob = await TestOutbox.start()
  const admin = new Redis(ob.redisServer.url)
  try {
    const org = await ob.org()
    const key = await ob.key(org, ['send'])
    const body = { from: `a@${org.domain}`, to: 'full@example.net', subject: 's', text: 't' }
    assert.equal((await ob.request('POST', '/v1/messages/send', { key, body })).status, 202)
    await admin.config('SET', 'maxmemory', '1')
    const r = await ob.request('POST', '/v1/messages/send', { key, body })
    assert.equal(r.status, 503, r.text)
    assert.equal(r.body.error.code, 'store_full', 'a Redis that answers but refuses writes is full, not down')
    assert.ok(Number(r.headers.get('retry-after')) >= 1)
    await admin.config('SET', 'maxmemory', '0')
    assert.equal((await ob.request('POST', '/v1/messages/send', { key, body })).status, 202)
  } finally {
    admin.disconnect()
    await ob.close()
  }
})
