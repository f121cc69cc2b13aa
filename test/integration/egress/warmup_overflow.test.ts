import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { queuedMessage } from '../../helpers/engine_env.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { EgressState } from '../../../stores/egress/mod.ts'
import { copiesAtSink, messageIdOf, startEgressCluster, type EgressCluster } from './egress_cluster.ts'

// A source in warm-up sends no more than its allowance to a provider; the pool's other source carries the rest,
// and mail over the allowance of a pool that has no other source waits, without an event and without spending an
// attempt, instead of failing.
const ALLOWANCE = 20
const COUNT = 80
const WARM = '127.0.0.2'
const COLD = '127.0.0.3'

let c: EgressCluster

before(async () => {
  c = await startEgressCluster({
    engines: 1,
    configure: async (ob, org) => {
      const egress = ob.proc.cp.egress
      // two steps, so that a run crossing midnight (UTC) still finds the source in warm-up
      const steps = [{ day: 1, perDay: ALLOWANCE, perHour: ALLOWANCE }, { day: 2, perDay: ALLOWANCE, perHour: ALLOWANCE }]
      await egress.addSource({ name: 'warm', address: WARM, ehlo: 'warm.outbox.test', warmup: { steps } })
      await egress.addSource({ name: 'cold', address: COLD, ehlo: 'cold.outbox.test' })
      await egress.putPool('mixed', [{ source: 'warm' }, { source: 'cold' }])
      await egress.putPool('warmonly', [{ source: 'warm' }])
      await egress.assignOrg(org.orgId, 'mixed')
    }
  })
})
after(async () => { await c?.close() })

test('a warming source sends its allowance and no more; the other source of the pool carries the rest', async (t) => {
  const msgs = Array.from({ length: COUNT },
    (_v, i) => queuedMessage(c.org, { to: [`user${i}@workspace.test`], track_opens: false, track_clicks: false }))
  for (const m of msgs) await c.publish(m)
  await c.events.until(() => msgs.every((m) => c.events.of(m.id, 'delivered').length === 1), 45_000)

  const copies = copiesAtSink(c.sink)
  for (const m of msgs) assert.equal(copies.get(messageIdOf(c.org, m)), 1, `${m.id} arrived once`)
  const fromWarm = c.sink.messages.filter((m) => m.remoteAddress === WARM).length
  const fromCold = c.sink.messages.filter((m) => m.remoteAddress === COLD).length
  t.diagnostic(`warm sent ${fromWarm}, cold ${fromCold}`)
  assert.ok(fromWarm >= 1 && fromWarm <= ALLOWANCE, `the warming source sent ${fromWarm}, its allowance is ${ALLOWANCE}`)
  assert.equal(fromWarm + fromCold, COUNT, 'every message from one of the two sources')
  assert.deepEqual(c.events.events.filter((e) => e.type !== 'delivered').map((e) => `${e.type}:${String(e.data.to)}`), [],
    'no deferral or any other event: waiting for warm-up is not an attempt')
})

test('with only the warming source, mail over its allowance waits: no event, no attempt, not failed', async () => {
  await c.ob.proc.cp.egress.assignOrg(c.org.orgId, 'warmonly')
  const state = new EgressState(c.redis)
  // the warm source used its whole allowance to Google in the first test (or does now)
  const fill = Array.from({ length: ALLOWANCE }, (_v, i) => queuedMessage(c.org, { to: [`fill${i}@workspace.test`] }))
  const before = c.sink.messages.filter((m) => m.remoteAddress === WARM).length
  if (before < ALLOWANCE) {
    for (const m of fill.slice(0, ALLOWANCE - before)) await c.publish(m)
    await eventually(() => c.sink.messages.filter((m) => m.remoteAddress === WARM).length >= ALLOWANCE, 'the allowance used up', 30_000)
  }
  const over = Array.from({ length: 5 }, (_v, i) => queuedMessage(c.org, { to: [`over${i}@workspace.test`] }))
  const atSink = c.sink.messages.length
  for (const m of over) await c.publish(m)

  // each message is marked waiting on the lane warm|google: it was seen and held, not lost
  await eventually(async () => {
    const lane = (await state.snapshot()).find((l) => l.lane === 'warm|google')
    return lane !== undefined && lane.waiting >= over.length
  }, 'the five messages waiting on warm|google', 20_000)
  await nothingHappensFor(3000) // a window for a wrong deferral, failure or send to show
  assert.equal(c.sink.messages.length, atSink, 'nothing more went out')
  for (const m of over) assert.deepEqual(c.events.of(m.id).map((e) => e.type), [], `${m.id}: no event (no attempt spent)`)
  const lane = (await state.snapshot()).find((l) => l.lane === 'warm|google')!
  assert.ok(lane.warmup.sentToday <= ALLOWANCE, `warm-up count ${lane.warmup.sentToday}`)
  assert.ok(lane.waiting >= over.length, `${lane.waiting} waiting`)
})
