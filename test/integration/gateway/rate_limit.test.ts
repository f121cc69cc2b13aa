import { test } from 'node:test'
import assert from 'node:assert/strict'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { ServerProcess } from '../../helpers/servers.ts'
import { connectRedis, redisReady } from '../../../stores/clients/mod.ts'
import { RateLimiter } from '../../../gateway/rate_limit.ts'

const own = useOwnRedis()

test('a fresh key gets its burst at once, then is refused with a retry time', async () => {
  const limiter = new RateLimiter(own.redis)
  const decisions = []
  for (let i = 0; i < 61; i++) decisions.push(await limiter.take('ob:rl:k1:60:60', 60))
  assert.equal(decisions.filter((d) => d.allowed).length, 60)
  assert.equal(decisions[0]!.remaining, 59)
  assert.equal(decisions[59]!.remaining, 0)
  const refused = decisions[60]!
  assert.equal(refused.allowed, false)
  assert.ok(refused.retryAfterS >= 1 && refused.retryAfterS <= 2, `retry after ${refused.retryAfterS}`)
  assert.ok(refused.resetS >= 59 && refused.resetS <= 61, `reset ${refused.resetS}`)
})

test('buckets are per key and the limit is part of the key', async () => {
  const limiter = new RateLimiter(own.redis)
  for (let i = 0; i < 5; i++) await limiter.take('ob:rl:k2:5:60', 5)
  assert.equal((await limiter.take('ob:rl:k2:5:60', 5)).allowed, false)
  assert.equal((await limiter.take('ob:rl:k3:5:60', 5)).allowed, true)
  assert.equal((await limiter.take('ob:rl:k2:300:60', 300)).allowed, true)
})

test('concurrent takes never exceed the burst', async () => {
  const limiter = new RateLimiter(own.redis)
  const all = await Promise.all(Array.from({ length: 200 }, async () => await limiter.take('ob:rl:k4:100:60', 100)))
  assert.equal(all.filter((d) => d.allowed).length, 100)
})

test('decisions made in one batch match the same decisions made one by one, and the bucket keeps their sum', async () => {
  const limiter = new RateLimiter(own.redis)
  const first = await Promise.all(Array.from({ length: 8 }, async () => await limiter.take('ob:rl:k6:10:60', 10)))
  assert.deepEqual(first.map((d) => d.remaining), [9, 8, 7, 6, 5, 4, 3, 2])
  // The next batch starts from what the first one left: two more fit, the rest are refused.
  const second = await Promise.all(Array.from({ length: 4 }, async () => await limiter.take('ob:rl:k6:10:60', 10)))
  assert.deepEqual(second.map((d) => d.allowed), [true, true, false, false])
  assert.ok(Number(await own.redis.pttl('ob:rl:k6:10:60')) > 50_000)
})

test('a Redis outage becomes service_unavailable, not a hang', async () => {
  const down = await ServerProcess.redis()
  const client = connectRedis(down.url, 'test-down')
  await redisReady(client)
  const limiter = new RateLimiter(client)
  await down.stop()
  await assert.rejects(limiter.take('ob:rl:k5:60:60', 60),
    (err: { code?: string, retryAfter?: number }) => err.code === 'service_unavailable' && err.retryAfter === 1)
  client.disconnect()
  await down.dispose()
})
