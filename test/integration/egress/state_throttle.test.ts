import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Redis } from 'ioredis'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { eventually } from '../../helpers/waiting.ts'
import { EgressState, RECOVER_EVERY_MS } from '../../../stores/egress/mod.ts'
import { engineClients, sleep } from './engine_clients.ts'

/** Replies throttle a lane for the whole cluster: slow halves its rate, pause and out hold it, and it recovers alone. */
const own = useOwnRedis()
let clients: Redis[] = []

// node:test may start this hook beside useOwnRedis's, so engineClients waits for its server
before(async () => { clients = await engineClients(own, 2) })
after(() => { for (const c of clients) c.disconnect() })

/** Sends admitted on `lane` at `perMinute` by 10 callers per client over `ms`, and the time it took. */
async function admittedOver (lane: string, perMinute: number, ms: number): Promise<{ admitted: number, elapsed: number }> {
  const states = clients.map((c) => new EgressState(c))
  let admitted = 0
  const start = Date.now()
  await Promise.all(states.flatMap((s) => Array.from({ length: 10 }, async () => {
    while (Date.now() < start + ms) {
      const gate = await s.takeSend(lane, perMinute)
      if (gate.kind === 'go') admitted++
      else await sleep(Math.min(gate.ms, 50))
    }
  })))
  return { admitted, elapsed: Date.now() - start }
}

test('slow halves the lane rate (burst included): measured side by side with a lane left alone', async () => {
  const state = new EgressState(clients[0]!)
  const slowed = await state.applyReply('ip-a|google', { kind: 'slow' }, 'google-421-rate')
  assert.equal(slowed.changed, true)
  assert.equal(slowed.throttle.factor, 0.5)
  assert.equal(slowed.throttle.reason, 'google-421-rate')
  const [plain, half] = await Promise.all([admittedOver('ip-b|google', 1200, 3000), admittedOver('ip-a|google', 1200, 3000)])
  const expect = (perS: number, elapsed: number): number => perS + perS * elapsed / 1000 // one second's burst, then the rate
  const want = { plain: expect(20, plain.elapsed), half: expect(10, half.elapsed) }
  assert.ok(Math.abs(plain.admitted - want.plain) <= 0.02 * want.plain + 1, `plain lane ${plain.admitted}, expected ${want.plain}`)
  assert.ok(Math.abs(half.admitted - want.half) <= 0.02 * want.half + 1, `slowed lane ${half.admitted}, expected ${want.half}`)
})

test('slows heard together count once; apart, each halves, down to 1/64', async () => {
  const together = new EgressState(clients[0]!)
  const all = await Promise.all(Array.from({ length: 5 }, async () => await together.applyReply('ip-c|yahoo', { kind: 'slow' }, 'r')))
  assert.equal(all.filter((r) => r.changed).length, 1)
  assert.equal((await together.throttle('ip-c|yahoo')).factor, 0.5)

  const apart = new EgressState(clients[1]!, Date.now, { slowQuietMs: 0 })
  const factors = []
  for (let i = 0; i < 8; i++) {
    const r = await apart.applyReply('ip-c|apple', { kind: 'slow' }, 'r')
    factors.push(r.throttle.factor)
    await sleep(2) // the quiet time is 0, but two slows in one millisecond are still one
  }
  assert.deepEqual(factors, [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 64, 1 / 64])
  assert.equal((await apart.applyReply('ip-c|apple', { kind: 'slow' }, 'r')).changed, false)
})

test('pause makes the lane wait with reason paused until its end; the later end wins; out outranks it', async () => {
  const state = new EgressState(clients[0]!)
  const paused = await state.applyReply('ip-d|microsoft', { kind: 'pause', ms: 1500 }, 'ms-451-pause')
  assert.equal(paused.changed, true)
  const gate = await state.takeSend('ip-d|microsoft', 600)
  assert.equal(gate.kind, 'wait')
  assert.ok(gate.kind === 'wait' && gate.reason === 'paused' && gate.ms > 1000 && gate.ms <= 1500, JSON.stringify(gate))
  const shorter = await state.applyReply('ip-d|microsoft', { kind: 'pause', ms: 500 }, 'other')
  assert.equal(shorter.changed, false, 'an earlier end changes nothing')
  assert.equal((await state.throttle('ip-d|microsoft')).reason, 'ms-451-pause')
  const end = paused.throttle.pausedUntil
  const go = await eventually(async () => {
    const g = await state.takeSend('ip-d|microsoft', 600)
    return g.kind === 'go' ? Date.now() : undefined
  }, 'the pause to end')
  assert.ok(go >= end - 50, `went ${end - go} ms before the pause ended`) // host and Redis clocks agree within that

  const out = await state.applyReply('ip-d|gmx', { kind: 'out', ms: 60_000 }, 'gmx-554-block')
  await state.applyReply('ip-d|gmx', { kind: 'pause', ms: 1000 }, 'p')
  const outGate = await state.takeSend('ip-d|gmx', 600)
  assert.ok(outGate.kind === 'wait' && outGate.reason === 'out' && outGate.ms > 55_000, JSON.stringify(outGate))
  assert.ok(out.throttle.outUntil > Date.now() + 55_000)
  const ttl = await own.redis.pttl('ob:eg:thr:{ip-d|gmx}')
  assert.ok(ttl > 60_000 && ttl <= 60_000 + 24 * 3_600_000, `throttle kept ${ttl} ms`)
})

test('recovery: the factor doubles back every recovery period without a new slow, up to 1', async () => {
  assert.equal(RECOVER_EVERY_MS, 600_000)
  const every = 400
  const state = new EgressState(clients[0]!, Date.now, { recoverEveryMs: every, slowQuietMs: 0 })
  await state.applyReply('ip-e|orange', { kind: 'slow' }, 'r')
  await sleep(2)
  const start = await state.applyReply('ip-e|orange', { kind: 'slow' }, 'r')
  assert.equal(start.throttle.factor, 0.25)
  const t0 = start.throttle.changedAt
  await eventually(async () => (await state.throttle('ip-e|orange')).factor === 0.5, 'one doubling')
  assert.ok(Date.now() >= t0 + every - 50, 'not before one period')
  await eventually(async () => (await state.throttle('ip-e|orange')).factor === 1, 'back to 1')
  assert.ok(Date.now() >= t0 + 2 * every - 50, 'not before two periods')
  // the rate follows the factor: a recovered lane has its whole burst again
  const gates = await Promise.all(Array.from({ length: 12 }, async () => await state.takeSend('ip-e|orange', 600)))
  assert.equal(gates.filter((g) => g.kind === 'go').length, 10)
  // a pause does not restart the recovery of an earlier slow
  const slow = await state.applyReply('ip-e|comcast', { kind: 'slow' }, 'r')
  await sleep(every / 2)
  await state.applyReply('ip-e|comcast', { kind: 'pause', ms: 10 }, 'p')
  await eventually(async () => (await state.throttle('ip-e|comcast')).factor === 1, 'recovered')
  // one period after the slow (not after the pause, which would be 1.5 periods after it)
  assert.ok(Date.now() < slow.throttle.changedAt + every + 150, 'recovered one period after the slow')
})
