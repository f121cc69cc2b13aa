import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Redis } from 'ioredis'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { EgressState, type LaneGate } from '../../../stores/egress/mod.ts'
import { engineClients, sleep } from './engine_clients.ts'

/** A lane's rate is held across the cluster: several clients together get the rate, plus one second's burst. */
const own = useOwnRedis()
let clients: Redis[] = []

// node:test may start this hook beside useOwnRedis's, so engineClients waits for its server
before(async () => { clients = await engineClients(own, 4) })
after(() => { for (const c of clients) c.disconnect() })

/** Callers on every client take sends for `ms`, each waiting as told (at most 50 ms at a time); the sends admitted. */
async function hammer (
  lane: string, perMinute: number, ms: number, callersPerClient: number
): Promise<{ admitted: number, elapsed: number, waits: LaneGate[] }> {
  const states = clients.map((c) => new EgressState(c))
  const waits: LaneGate[] = []
  let admitted = 0
  const start = Date.now()
  const until = start + ms
  await Promise.all(states.flatMap((s) => Array.from({ length: callersPerClient }, async () => {
    while (Date.now() < until) {
      const gate = await s.takeSend(lane, perMinute)
      if (gate.kind === 'go') {
        admitted++
      } else {
        if (waits.length < 1000) waits.push(gate)
        await sleep(Math.min(gate.ms, 50))
      }
    }
  })))
  return { admitted, elapsed: Date.now() - start, waits }
}

test('600/min from 4 clients × 10 callers over 5 s admits the rate within 2 %, plus the burst', async () => {
  const { admitted, elapsed, waits } = await hammer('ip-a|google', 600, 5000, 10)
  const burst = 10 // one second's worth
  const expected = burst + (elapsed / 1000) * 10
  assert.ok(Math.abs(admitted - expected) <= 0.02 * expected + 1, `admitted ${admitted}, expected ${expected.toFixed(1)} in ${elapsed} ms`)
  assert.ok(waits.length > 0)
  for (const w of waits) {
    assert.equal(w.kind, 'wait')
    if (w.kind === 'wait') {
      assert.equal(w.reason, 'rate')
      assert.ok(w.ms >= 1 && w.ms <= 100, `a wait of ${w.ms} ms at 10/s`)
    }
  }
  assert.ok(await own.redis.pttl('ob:eg:rate:{ip-a|google}:600') > 0, 'the bucket expires')
})

test('a fresh lane gives its burst at once and then one send per interval', async () => {
  const state = new EgressState(clients[0]!)
  const gates = await Promise.all(Array.from({ length: 15 }, async () => await state.takeSend('ip-b|yahoo', 300)))
  assert.equal(gates.filter((g) => g.kind === 'go').length, 5, 'burst of 300/min: 5')
  const waits = gates.flatMap((g) => g.kind === 'wait' ? [g.ms] : [])
  assert.ok(waits.every((ms) => ms > 0 && ms <= 201), `waits ${waits.join(', ')}`)
  // a rate below 60/min still lets one through
  assert.equal((await state.takeSend('ip-b|apple', 6)).kind, 'go')
  assert.equal((await state.takeSend('ip-b|apple', 6)).kind, 'wait')
  // no rate: nothing but pauses and outs limits the lane
  for (let i = 0; i < 100; i++) assert.equal((await state.takeSend('ip-b|gmx', 0)).kind, 'go')
})
