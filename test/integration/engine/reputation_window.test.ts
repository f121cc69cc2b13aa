import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ReputationWindow } from '../../../stores/reputation/mod.ts'
import { useOwnRedis } from '../../helpers/own_redis.ts'

const HOUR = 3600_000
const own = useOwnRedis()

/** A window over the test's own clock, as a process of the installation sees it. */
function windowOf (hours: number, clock: { now: number }): ReputationWindow {
  return new ReputationWindow(own.redis, hours, () => clock.now)
}

async function hmgetCalls (): Promise<number> {
  const stats = await own.redis.info('commandstats')
  return Number(/^cmdstat_hmget:calls=(\d+)/m.exec(stats)?.[1] ?? 0)
}

test('a window is the sum of its hours: older hours leave it as time passes, the current one counts at once', async () => {
  const clock = { now: Date.UTC(2026, 10, 29, 9, 30) }
  const w = windowOf(3, clock)
  await w.count('org_w1', 'outbound', 'delivered') // 09:xx: leaves the window at 12:00
  clock.now += HOUR
  await w.count('org_w1', 'outbound', 'delivered')
  await w.count('org_w1', 'outbound', 'hard_bounced')
  clock.now += HOUR
  assert.deepEqual(await w.count('org_w1', 'outbound', 'complained'), { delivered: 2, hard_bounced: 1, complained: 1 })
  assert.deepEqual(await w.count('org_w1', 'outbound', 'delivered'), { delivered: 3, hard_bounced: 1, complained: 1 })
  clock.now += HOUR // 12:30: the window is 10:00 to 12:59
  assert.deepEqual(await w.read('org_w1', 'outbound'), { delivered: 2, hard_bounced: 1, complained: 1 })
  assert.deepEqual(await w.read('org_w1', 'news'), { delivered: 0, hard_bounced: 0, complained: 0 })
})

test('processes counting at once see every count, and a reset by one empties the window for all of them', async () => {
  const clock = { now: Date.UTC(2026, 10, 29, 9, 30) }
  const [a, b] = [windowOf(24, clock), windowOf(24, clock)]
  await Promise.all(Array.from({ length: 50 }, async (_v, i) => await (i % 2 === 0 ? a : b).count('org_w2', 'outbound', 'delivered')))
  clock.now += HOUR
  // both keep the earlier hours' sums for this hour
  await Promise.all([a.count('org_w2', 'outbound', 'hard_bounced'), b.count('org_w2', 'outbound', 'hard_bounced')])
  assert.deepEqual(await a.read('org_w2', 'outbound'), { delivered: 50, hard_bounced: 2, complained: 0 })
  await b.reset('org_w2', 'outbound')
  assert.deepEqual(await a.read('org_w2', 'outbound'), { delivered: 0, hard_bounced: 0, complained: 0 })
  assert.deepEqual(await a.count('org_w2', 'outbound', 'delivered'), { delivered: 1, hard_bounced: 0, complained: 0 })
  assert.deepEqual(await b.read('org_w2', 'outbound'), { delivered: 1, hard_bounced: 0, complained: 0 })
  clock.now += HOUR
  assert.deepEqual(await b.read('org_w2', 'outbound'), { delivered: 1, hard_bounced: 0, complained: 0 })
})

test('a count reads the same few keys however many hours the window spans, past the first count of an hour', async () => {
  const clock = { now: Date.UTC(2026, 10, 29, 9, 30) }
  const w = windowOf(168, clock)
  for (let h = 0; h < 5; h++) {
    await w.count('org_w3', 'outbound', 'delivered')
    clock.now += HOUR
  }
  await w.count('org_w3', 'outbound', 'delivered') // adds up the 167 earlier hours once
  const before = await hmgetCalls()
  for (let i = 0; i < 100; i++) await w.count('org_w3', 'outbound', 'delivered')
  assert.equal(await hmgetCalls() - before, 200)
  assert.deepEqual(await w.read('org_w3', 'outbound'), { delivered: 106, hard_bounced: 0, complained: 0 })
})
