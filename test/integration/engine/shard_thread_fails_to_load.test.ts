import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'

let scenario: RelayScenario | undefined
const dir = mkdtempSync(join(tmpdir(), 'outbox-thread-'))
after(async () => {
  await scenario?.close()
  rmSync(dir, { recursive: true, force: true })
})

test('a shard thread that fails to load its module: the message it held is handed back, the failure is logged once with a code, and a new thread delivers the message once', async () => {
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
