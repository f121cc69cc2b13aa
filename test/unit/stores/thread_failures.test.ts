import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { pino } from 'pino'
import { reportThreadFailures, THREAD_FAILURE_LOG_MS } from '../../../stores/threads/mod.ts'

test('a pool whose threads keep failing logs the first failure at once, then at most once a minute with the failures since', () => {
  const logs: Array<Record<string, unknown>> = []
  const log = pino({ level: 'error' }, new Writable({
    write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() }
  }))
  let now = 1_000_000
  const report = reportThreadFailures(log, 'shard thread 0', () => now)
  report(new Error('first'))
  for (let i = 0; i < 4; i++) { now += 1000; report(new Error('again')) }
  assert.equal(logs.length, 1)
  assert.deepEqual([logs[0]!.code, logs[0]!.pool, logs[0]!.failures, (logs[0]!.err as { message: string }).message],
    ['engine_thread_failed', 'shard thread 0', 1, 'first'])
  now += THREAD_FAILURE_LOG_MS
  report(new Error('later'))
  assert.equal(logs.length, 2)
  assert.equal(logs[1]!.failures, 5, 'the four not logged and this one')
})
