import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { queuedMessage } from '../../helpers/engine_env.ts'
import { eventually } from '../../helpers/waiting.ts'
import { copiesAtSink, DELIVERED_WITHIN_MS, messageIdOf, startEgressCluster, type EgressCluster } from './egress_cluster.ts'

// Two engine processes of two shard threads each send through one source (127.0.0.2) to Google, whose limits the
// operator lowered: every connection slot and every send of the lane is counted in the one Redis, so the cluster as
// a whole keeps the lane's limits, measured where the receiver sees them (the sink).
const COUNT = 150
const MAX_CONNECTIONS = 3
const PER_MINUTE = 600 // 10 a second
const BURST = Math.max(1, Math.floor(PER_MINUTE / 60)) // stores/egress send.lua.ts: one second's worth

let c: EgressCluster

before(async () => {
  c = await startEgressCluster({
    engines: 2,
    threads: 2,
    configure: async (ob, org) => {
      const egress = ob.proc.cp.egress
      await egress.addSource({ name: 'mta2', address: '127.0.0.2', ehlo: 'mta2.outbox.test' })
      await egress.putPool('one', [{ source: 'mta2' }])
      await egress.assignOrg(org.orgId, 'one')
      await egress.setProviderLimits('google', { maxConnections: MAX_CONNECTIONS, messagesPerMinute: PER_MINUTE }, [])
    }
  })
})
after(async () => { await c?.close() })

test('two engines of two threads each keep one lane\'s connection cap and rate cluster-wide', async (t) => {
  const msgs = Array.from({ length: COUNT },
    (_v, i) => queuedMessage(c.org, { to: [`user${i}@workspace.test`], track_opens: false, track_clicks: false }))
  for (const m of msgs) await c.publish(m)
  await eventually(() => c.sink.messages.length >= COUNT,
    () => `${COUNT} messages at the sink (have ${c.sink.messages.length})`, DELIVERED_WITHIN_MS)

  // all delivered, none twice, every one from the source
  const copies = copiesAtSink(c.sink)
  for (const m of msgs) assert.equal(copies.get(messageIdOf(c.org, m)), 1, `${m.id} arrived once`)
  assert.equal(c.sink.messages.length, COUNT)
  assert.ok(c.sink.messages.every((m) => m.remoteAddress === '127.0.0.2'), 'every message came from the source')

  // connections: never more than the lane's cap open at once from the source, across both processes
  const peak = c.sink.peakOpenByAddress.get('127.0.0.2') ?? 0
  t.diagnostic(`peak connections from 127.0.0.2: ${peak}, sessions opened: ${c.sink.connectionsByAddress.get('127.0.0.2') ?? 0}`)
  assert.ok(peak >= 1 && peak <= MAX_CONNECTIONS, `at most ${MAX_CONNECTIONS} connections open at once (saw ${peak})`)

  // rate: the GCRA admits at most BURST + T × rate messages in any span of T (its burst of one second's worth, then
  // one every 60 000 / PER_MINUTE ms). Measured at the sink from the first to the last accepted message, with 2 %
  // for the clocks: N ≤ BURST + 1.02 × T_s × PER_MINUTE / 60. Here N = 150, BURST = 10: T_s must be at least
  // (150 − 10) / (1.02 × 10) ≈ 13.7 s, where a cluster ignoring the limit would take a second or two.
  const times = c.sink.messages.map((m) => m.receivedAt).sort((a, b) => a - b)
  const spanS = (times[times.length - 1]! - times[0]!) / 1000
  const allowed = BURST + 1.02 * spanS * PER_MINUTE / 60
  t.diagnostic(`${COUNT} messages in ${spanS.toFixed(2)} s (${((COUNT - BURST) / spanS).toFixed(2)}/s after the burst); ` +
    `bound ${allowed.toFixed(1)}`)
  assert.ok(COUNT <= allowed,
    `${COUNT} messages in ${spanS.toFixed(2)} s exceed ${PER_MINUTE}/min + a burst of ${BURST} (bound ${allowed.toFixed(1)})`)

  // no event but the delivery: waiting for the lane is not an attempt
  await c.events.until(() => msgs.every((m) => c.events.of(m.id, 'delivered').length === 1), 30_000)
  assert.equal(c.events.events.filter((e) => e.type === 'deferred').length, 0, 'no deferral')
})
