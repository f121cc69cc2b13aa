import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { SentinelSet } from '../../helpers/redis_sentinel.ts'
import { eventually } from '../../helpers/waiting.ts'
import { loadConfig } from '../../../config/mod.ts'
import { connectRedis } from '../../../stores/clients/mod.ts'

/**
 * A master that stops answering without closing its connections — frozen with SIGSTOP here, as one cut off from
 * the network or on a machine lost without a reset — is given up by a client through Sentinel once the sentinels
 * promote the replica: the client notices the silence (stores/clients/redis_watchdog.ts) and asks the sentinels
 * again, instead of waiting for TCP to give up. (test/integration/netns/redis_master_partitioned.test.ts does the
 * same with a real network cut, where namespaces can be made.)
 */
let set: SentinelSet | undefined
after(async () => {
  const pid = set?.master.pid
  if (pid !== undefined) process.kill(pid, 'SIGCONT')
  await set?.dispose()
})

test('a silent master is left for the promoted replica without waiting for the connection to close', async (t) => {
  set = await SentinelSet.start()
  const redis = connectRedis(loadConfig({ REDIS_URL: set.url }).redis.target, 'test')
  redis.on('error', () => {})
  try {
    await eventually(async () => await redis.set('k', 'before').then(() => true, () => false), 'a first write')
    const stoppedAt = Date.now()
    process.kill(set.master.pid!, 'SIGSTOP')
    await set.untilMasterIs(set.replica.port, 20_000)
    const promotedAt = Date.now()
    await eventually(async () => await redis.set('k', 'after').then(() => true, () => false),
      'a write accepted by the promoted replica', 20_000, 100)
    t.diagnostic(`promoted ${promotedAt - stoppedAt} ms after the master stopped; writes accepted ${Date.now() - promotedAt} ms later`)
    const promoted = new Redis({ port: set.replica.port, host: '127.0.0.1' })
    try {
      assert.equal(await promoted.get('k'), 'after', 'the write is on the promoted replica')
    } finally {
      promoted.disconnect()
    }
  } finally {
    redis.disconnect()
  }
})
