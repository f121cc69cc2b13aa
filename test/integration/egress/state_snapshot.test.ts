import { test } from 'node:test'
import assert from 'node:assert/strict'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { nothingHappensFor } from '../../helpers/waiting.ts'
import { EgressState, laneId, MAX_LANE_ID_LENGTH } from '../../../stores/egress/mod.ts'

/** Operators see every lane: its connections, throttle, waiting depth and oldest wait, and warm-up counts. */
const own = useOwnRedis()

test('the snapshot lists each lane seen with its connections, throttle, waiting depth and oldest age', async () => {
  const state = new EgressState(own.redis)
  const lane = 'ip-a|google'
  await state.acquireConnection(lane, 'c1', 5, 60_000)
  await state.acquireConnection(lane, 'c2', 5, 60_000)
  await state.acquireConnection(lane, 'c3', 5, 60_000)
  await state.releaseConnection(lane, 'c3')
  await state.applyReply(lane, { kind: 'slow' }, 'google-421-rate')
  await state.noteWaiting(lane, 'm1')
  await nothingHappensFor(300) // so m1's wait has an age
  await state.noteWaiting(lane, 'm2')
  await state.noteWaiting(lane, 'm1') // the first mark stays
  await state.noteWaiting(lane, 'm3')
  await state.clearWaiting(lane, 'm3')
  await state.takeWarmup('ip-a', 'google', { perDay: 100, perHour: 10 })
  await state.takeWarmup('ip-a', 'google', { perDay: 100, perHour: 10 })
  await state.takeSend('host|site:mx1.example.com', 600)

  const snapshot = await state.snapshot()
  assert.deepEqual(snapshot.map((l) => l.lane), ['host|site:mx1.example.com', 'ip-a|google'])
  const [site, google] = snapshot
  const iso = new Date().toISOString()
  const day = iso.slice(0, 4) + iso.slice(5, 7) + iso.slice(8, 10)
  assert.equal(google!.source, 'ip-a')
  assert.equal(google!.provider, 'google')
  assert.equal(google!.connections, 2)
  assert.equal(google!.throttle.factor, 0.5)
  assert.equal(google!.throttle.reason, 'google-421-rate')
  assert.equal(google!.waiting, 2)
  assert.ok(google!.oldestWaitingMs !== undefined && google!.oldestWaitingMs >= 290, `oldest ${google!.oldestWaitingMs}`)
  assert.deepEqual(google!.warmup, { day, sentToday: 2, hour: day + iso.slice(11, 13), sentThisHour: 2 })
  assert.deepEqual(site, {
    lane: 'host|site:mx1.example.com',
    source: 'host',
    provider: 'site:mx1.example.com',
    connections: 0,
    throttle: { factor: 1, pausedUntil: 0, outUntil: 0, changedAt: 0, reason: '' },
    waiting: 0,
    oldestWaitingMs: undefined,
    warmup: { day, sentToday: 0, hour: day + iso.slice(11, 13), sentThisHour: 0 }
  })
})

test('untrusted names reach the snapshot capped and cleaned, and every egress key expires', async () => {
  const state = new EgressState(own.redis)
  const provider = 'site:{' + 'mx.example.com '.repeat(30) + '}'
  await state.acquireConnection(`ip-b|${provider}`, 'c1', 1, 60_000)
  await state.noteWaiting(`ip-b|${provider}`, 'm1')
  const lane = (await state.snapshot()).find((l) => l.source === 'ip-b')
  assert.equal(lane?.lane, laneId('ip-b', provider))
  assert.equal(lane.lane.length, MAX_LANE_ID_LENGTH)
  assert.doesNotMatch(lane.lane, /[{}\s]/)
  assert.equal(lane.connections, 1)
  assert.equal(lane.waiting, 1)

  const keys = await own.redis.keys('ob:eg:*')
  assert.ok(keys.length >= 8, keys.join(' '))
  for (const key of keys) assert.ok(await own.redis.pttl(key) > 0, `${key} expires`)
})
