import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Redis } from 'ioredis'
import { useOwnRedis } from '../../helpers/own_redis.ts'
import { EgressState, type LaneGate } from '../../../stores/egress/mod.ts'
import { engineClients } from './engine_clients.ts'

/** A source's warm-up allowance per provider is never exceeded, however many engines count against it at once. */
const own = useOwnRedis()
let clients: Redis[] = []

// node:test may start this hook beside useOwnRedis's, so engineClients waits for its server
before(async () => { clients = await engineClients(own, 4) })
after(() => { for (const c of clients) c.disconnect() })

/** 4 clients × 50 callers, each taking once, all at the same time. */
async function takeAll (
  provider: string, allowance: { perDay: number, perHour: number }, clock?: () => number
): Promise<LaneGate[]> {
  const states = clients.map((c) => new EgressState(c, clock))
  return await Promise.all(states.flatMap((s) => Array.from({ length: 50 }, async () => await s.takeWarmup('ip-a', provider, allowance))))
}

const goes = (gates: LaneGate[]): number => gates.filter((g) => g.kind === 'go').length

test('200 concurrent takes against 25 an hour admit exactly 25; the rest wait, with reason warmup, until the hour ends', async () => {
  const clock = (): number => Date.UTC(2026, 10, 28, 10, 59, 59, 250)
  const gates = await takeAll('google', { perDay: 1000, perHour: 25 }, clock)
  assert.equal(goes(gates), 25)
  for (const g of gates) if (g.kind === 'wait') assert.deepEqual(g, { kind: 'wait', ms: 750, reason: 'warmup' })
  assert.equal(await own.redis.get('ob:eg:wu:{ip-a|google}:2026112810'), '25')
  assert.equal(await own.redis.get('ob:eg:wu:{ip-a|google}:20261128'), '25')
  assert.ok(await own.redis.pttl('ob:eg:wu:{ip-a|google}:2026112810') > 0, 'counts expire')
})

test('the day allowance holds across hours: 20 a day admits 20, and the wait is until the day ends', async () => {
  let now = Date.UTC(2026, 10, 28, 22, 0, 0)
  const clock = (): number => now
  assert.equal(goes(await takeAll('microsoft', { perDay: 20, perHour: 15 }, clock)), 15)
  now = Date.UTC(2026, 10, 28, 23, 30, 0)
  const gates = await takeAll('microsoft', { perDay: 20, perHour: 15 }, clock)
  assert.equal(goes(gates), 5, 'the next hour brings only what is left of the day')
  for (const g of gates) if (g.kind === 'wait') assert.deepEqual(g, { kind: 'wait', ms: 30 * 60_000, reason: 'warmup' })
})

test('a refund gives one back, once per take', async () => {
  const state = new EgressState(clients[0]!)
  const allowance = { perDay: 3, perHour: 100 }
  for (let i = 0; i < 3; i++) assert.equal((await state.takeWarmup('ip-b', 'yahoo', allowance)).kind, 'go')
  assert.equal((await state.takeWarmup('ip-b', 'yahoo', allowance)).kind, 'wait')
  await state.refundWarmup('ip-b', 'yahoo')
  assert.equal((await state.takeWarmup('ip-b', 'yahoo', allowance)).kind, 'go')
  assert.equal((await state.takeWarmup('ip-b', 'yahoo', allowance)).kind, 'wait')
  // refunds never take a count below zero
  for (let i = 0; i < 5; i++) await state.refundWarmup('ip-b', 'apple')
  assert.equal(goes(await Promise.all(Array.from({ length: 5 }, async () => await state.takeWarmup('ip-b', 'apple', allowance)))), 3)
})

test('an allowance of 0 admits nothing; an unbounded one admits everything and still counts', async () => {
  const state = new EgressState(clients[0]!)
  assert.equal((await state.takeWarmup('ip-c', 'google', { perDay: 0, perHour: 10 })).kind, 'wait')
  for (let i = 0; i < 30; i++) assert.equal((await state.takeWarmup('ip-c', 'gmx', { perDay: Infinity, perHour: Infinity })).kind, 'go')
  const [lane] = (await state.snapshot()).filter((l) => l.lane === 'ip-c|gmx')
  assert.equal(lane?.warmup.sentToday, 30)
})
