import { test, after, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { ShardActors } from '../../../engine/shards.ts'
import type { DeliverTask } from '../../../engine/actor/task.ts'
import { OutboxMetrics } from '../../../stores/metrics/mod.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'

let scenario: RelayScenario | undefined
const dir = mkdtempSync(join(tmpdir(), 'outbox-thread-'))
after(async () => {
  await scenario?.close()
  rmSync(dir, { recursive: true, force: true })
})

test('a shard thread that fails to load its module: the message it held is handed back, ' +
  'the failure is logged once with a code, and a new thread delivers the message once', { timeout: 60_000 }, async () => {
  // the thread's environment is the process's when the pool starts it
  process.env.OB_TEST_THREAD_DIR = dir
  scenario = await startRelayScenario({
    logLevel: 'warn',
    env: { OB_ENGINE_THREADS: '1' },
    shardThreadEntry: new URL('./thread_fails_once.cjs', import.meta.url)
  })
  const { ob, org, sink, events, logs } = scenario
  const msg = queuedMessage(org, { to: ['alice@dest.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  // the first thread fails once the message is in it; the engine hands the message back (5 s) and delivers it
  await events.until(() => events.of(msg.id, 'delivered').length === 1, 30_000)

  assert.equal(sink.to('alice@dest.example').length, 1, 'delivered once')
  const handedBack = logs.filter((l) => l.msg === 'message processing failed; handed back')
  assert.equal(handedBack.length, 1, JSON.stringify(logs))
  assert.match(String((handedBack[0]!.err as { message?: string }).message), /this shard thread cannot load its module/, 'the module\'s own error, not a Node internal one')
  const failed = logs.filter((l) => l.code === 'engine_thread_failed')
  assert.equal(failed.length, 1, JSON.stringify(logs))
  assert.equal(failed[0]!.level, 50)
  assert.equal(failed[0]!.pool, 'shard thread 0')
  assert.match(String((failed[0]!.err as { message?: string }).message), /this shard thread cannot load its module/)
})

async function actorsOn (t: TestContext, entry: string): Promise<{ actors: ShardActors, logs: Array<Record<string, unknown>> }> {
  const logs: Array<Record<string, unknown>> = []
  const log = pino({ level: 'warn' }, new Writable({
    write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() }
  }))
  const redis = await ServerProcess.redis()
  const settings = { redis: { kind: 'node' as const, url: redis.url }, relayTls: 'verify' as const, stsPort: 443, outboundPort: 25, allowPrivate: false, dnsServers: [], poolConnections: 1, hostRatePerS: 10, egressShaping: false, publicUrl: 'http://127.0.0.1', secret: new Uint8Array(32) }
  const actors = new ShardActors(settings, 1, 1, 1, new OutboxMetrics(), log, new URL(entry, import.meta.url))
  t.after(async () => { await actors.close(); await redis.dispose() })
  return { actors, logs }
}

const task = { kind: 'deliver', message: {}, recipients: [], domain: {}, verpKey: {} } as unknown as DeliverTask

test('a shard thread whose module fails to link rejects its task with the link error, ' +
  'not a Node internal assertion', { timeout: 30_000 }, async (t) => {
  const { actors, logs } = await actorsOn(t, './links_badly_thread.cjs')
  await assert.rejects(actors.deliver(0, task), (err: Error & { code?: string }) => {
    assert.notEqual(err.code, 'ERR_INTERNAL_ASSERTION')
    assert.match(err.message, /does not provide an export named 'notExported'/)
    return true
  })
  // the thread then ends with the same error; the pool logs it and starts another
  await eventually(() => logs.some((l) => l.code === 'engine_thread_failed'), 'the thread failure logged')
  assert.match(String((logs.find((l) => l.code === 'engine_thread_failed')!.err as { message?: string }).message), /does not provide an export named 'notExported'/)
})

test('shard threads that never load: every task fails instead of waiting, the failures are logged once, ' +
  'and closing returns', { timeout: 30_000 }, async (t) => {
  const { actors, logs } = await actorsOn(t, './never_loads_thread.cjs')
  const failures = (): number => logs.filter((l) => l.code === 'engine_thread_failed').length
  await assert.rejects(actors.deliver(0, task), /this shard thread entry cannot be loaded|Terminating worker thread/)
  await eventually(() => failures() === 1, 'the first thread failure logged')
  await assert.rejects(actors.deliver(0, task), /this shard thread entry cannot be loaded|Terminating worker thread/)
  await nothingHappensFor(1200) // the next thread's failure would be logged by now, were it not counted instead
  assert.equal(logs.filter((l) => l.code === 'engine_thread_failed').length, 1, 'later failures within the minute are counted, not logged')
  await actors.close()
})
