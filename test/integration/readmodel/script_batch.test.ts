import { test } from 'node:test'
import assert from 'node:assert/strict'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { ScriptBatch } from '../../../stores/clients/mod.ts'

const own = useOwnRedis()

async function scriptCalls (): Promise<number> {
  const stats = await own.redis.info('commandstats')
  let n = 0
  for (const m of stats.matchAll(/cmdstat_eval(?:sha)?:calls=(\d+)/g)) n += Number(m[1])
  return n
}

// Appends ARGV[1] to a list and answers the list's length: the answers show the order the calls ran in.
const APPEND = "return redis.call('RPUSH', KEYS[1], ARGV[1])"

test('calls made in one turn of the event loop run as one script execution, in order', async () => {
  const batch = new ScriptBatch<number>(own.redis, 'test_append_batch', APPEND)
  await batch.call(['warm'], ['x']) // loads the script
  const before = await scriptCalls()
  const answers = await Promise.all(Array.from({ length: 50 }, async (_, i) => await batch.call(['order'], [String(i)])))
  assert.equal(await scriptCalls() - before, 1)
  assert.deepEqual(answers, Array.from({ length: 50 }, (_, i) => i + 1))
  assert.deepEqual(await own.redis.lrange('order', 0, -1), Array.from({ length: 50 }, (_, i) => String(i)))
})

test('calls with different key and argument counts each get their own KEYS and ARGV', async () => {
  const batch = new ScriptBatch<string[]>(own.redis, 'test_echo_batch',
    'local out = {} for i = 1, #KEYS do out[#out + 1] = KEYS[i] end for i = 1, #ARGV do out[#out + 1] = ARGV[i] end return out')
  const [a, b, c] = await Promise.all([batch.call(['k1'], []), batch.call(['k2', 'k3'], ['a1', 'a2', 'a3']), batch.call([], ['only'])])
  assert.deepEqual(a, ['k1'])
  assert.deepEqual(b, ['k2', 'k3', 'a1', 'a2', 'a3'])
  assert.deepEqual(c, ['only'])
})

test('more calls than one batch holds are split, and a finish step runs once per batch', async () => {
  const batch = new ScriptBatch<number>(own.redis, 'test_count_batch', 'BATCH.n = (BATCH.n or 0) + 1 return BATCH.n', {
    maxBatch: 10, finish: "redis.call('RPUSH', 'batch-sizes', BATCH.n)"
  })
  const answers = await Promise.all(Array.from({ length: 25 }, async () => await batch.call([], [])))
  assert.deepEqual(answers, [...Array.from({ length: 10 }, (_, i) => i + 1), ...Array.from({ length: 10 }, (_, i) => i + 1), 1, 2, 3, 4, 5])
  assert.deepEqual(await own.redis.lrange('batch-sizes', 0, -1), ['10', '10', '5'])
})

test('a script error rejects every call of its batch and the next batch runs normally', async () => {
  const batch = new ScriptBatch<number>(own.redis, 'test_fail_batch', "if ARGV[1] == 'fail' then error('refused') end return 1")
  const results = await Promise.allSettled([batch.call([], ['ok']), batch.call([], ['fail'])])
  assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected'])
  assert.equal(await batch.call([], ['ok']), 1)
})

test('a batch is written at once, not held back while an auto-pipelined command awaits its answer', async () => {
  const batch = new ScriptBatch<number>(own.redis, 'test_unheld_batch', APPEND)
  await batch.call(['unheld'], ['warm']) // loads the script
  await own.redis.del('unheld')
  // a command that keeps Redis busy for 300 ms, sent through the auto-pipeline and awaiting its answer
  const busy = own.redis.eval("local t = redis.call('TIME') local until_us = t[1] * 1e6 + t[2] + 300000 " +
    "repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] >= until_us return 1", 0)
  await new Promise((resolve) => setTimeout(resolve, 50))
  // the auto-pipeline keeps this one until the busy command is answered; the batch goes out meanwhile
  const held = own.redis.rpush('unheld', 'auto-pipelined')
  const batched = batch.call(['unheld'], ['batched'])
  await Promise.all([busy, held, batched])
  assert.deepEqual(await own.redis.lrange('unheld', 0, -1), ['batched', 'auto-pipelined'])
})
