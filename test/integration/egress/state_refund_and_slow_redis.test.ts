import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Redis } from 'ioredis'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { eventually } from '../../helpers/waiting.ts'
import { EgressState, SLOW_REDIS_WAIT_MS } from '../../../stores/egress/mod.ts'
import { engineRedis } from './engine_clients.ts'

/**
 * A send given back (its message found no free connection) is a send the lane may make again; and a Redis that is
 * connected but too slow to answer within the client's timeout makes the gates wait rather than let mail past the
 * limits, the slot a late acquire took being given back behind it.
 */
const own = useOwnRedis()
let redis: Redis | undefined

/** The engine-like client, made once the file's Redis runs. */
async function client (): Promise<Redis> {
  redis ??= await engineRedis(own.server.url)
  return redis
}
after(() => { redis?.disconnect() })

test('a refunded send lets one more go at once; a refund on a bucket already full changes nothing', async () => {
  const state = new EgressState(await client())
  const lane = 'ip-r|google'
  for (let i = 0; i < 5; i++) assert.equal((await state.takeSend(lane, 300)).kind, 'go', 'the burst of 300/min: 5')
  assert.equal((await state.takeSend(lane, 300)).kind, 'wait')
  await state.refundSend(lane, 300)
  assert.equal((await state.takeSend(lane, 300)).kind, 'go', 'the refunded send')
  assert.equal((await state.takeSend(lane, 300)).kind, 'wait')
  // a lane never used: nothing to give back, and no key is written
  await state.refundSend('ip-r|yahoo', 300)
  assert.equal(await own.redis.exists('ob:eg:rate:{ip-r|yahoo}:300'), 0)
})

test('with Redis connected but paused past the command timeout the gates wait and no slot stays taken', async () => {
  const errors: unknown[] = []
  const state = new EgressState(await client(), Date.now, { onError: (err) => errors.push(err) })
  const lane = 'ip-s|google'
  assert.equal((await state.takeSend(lane, 600)).kind, 'go') // the scripts are loaded before the pause
  assert.equal(await state.acquireConnection(lane, 'h0', 5, 60_000), true)
  await own.redis.call('CLIENT', 'PAUSE', '2500', 'ALL')
  const [send, warmup, slot] = await Promise.all([
    state.takeSend(lane, 600),
    state.takeWarmup('ip-s', 'google', { perDay: 100, perHour: 100 }),
    state.acquireConnection(lane, 'h1', 5, 60_000)
  ])
  assert.deepEqual(send, { kind: 'wait', ms: SLOW_REDIS_WAIT_MS, reason: 'rate' })
  assert.deepEqual(warmup, { kind: 'wait', ms: SLOW_REDIS_WAIT_MS, reason: 'warmup' })
  assert.equal(slot, false)
  assert.ok(errors.length >= 3, `${errors.length} timeouts heard`)
  // once Redis answers again the late acquire has run and its slot was given back: only h0 holds one
  await eventually(async () => {
    const holders = await own.redis.zrange('ob:eg:conn:{ip-s|google}', '0', '-1').catch(() => undefined) // paused still
    return holders?.length === 1 && holders[0] === 'h0'
  }, 'only h0 holding a slot', 10_000)
})
