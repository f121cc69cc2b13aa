import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { queuedMessage } from '../../helpers/engine_env.ts'
import { eventually } from '../../helpers/waiting.ts'
import { copiesAtSink, DELIVERED_WITHIN_MS, messageIdOf, startEgressCluster, type EgressCluster } from './egress_cluster.ts'

// One pool of two sources sends to Google. The operator lowered Google's limits for the whole installation, and
// lowered them again for one source only (127.0.0.3): that source is held to its own, while the other source of the
// same pool keeps the provider's. Counted at the sink, which records the address each connection came from.
const COUNT = 120
const PROVIDER = { maxConnections: 3, messagesPerMinute: 1200 } // 20 a second
const OWN = { maxConnections: 1, messagesPerMinute: 240 } // 4 a second
const burstOf = (perMinute: number): number => Math.max(1, Math.floor(perMinute / 60)) // stores/egress send.lua.ts
const LOW = '127.0.0.3'
const FULL = '127.0.0.2'

let c: EgressCluster
let opKey: string

before(async () => {
  c = await startEgressCluster({
    engines: 1,
    threads: 2,
    configure: async (ob, org) => {
      opKey = (await ob.proc.cp.operatorKeys.create('ops')).value
      const op = async (method: string, path: string, body: unknown): Promise<void> => {
        const r = await ob.request(method, `/v1/operator/egress${path}`, { key: opKey, body })
        assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${r.text}`)
      }
      await op('POST', '/sources', { name: 'mta2', address: FULL, ehlo: 'mta2.outbox.test' })
      await op('POST', '/sources', { name: 'mta3', address: LOW, ehlo: 'mta3.outbox.test' })
      await op('PUT', '/pools/two', { sources: [{ source: 'mta2' }, { source: 'mta3' }] })
      await op('PUT', '/limits', { limits: { google: PROVIDER } })
      await op('PUT', '/sources/mta3/limits', { limits: { google: OWN } })
      await ob.proc.cp.egress.assignOrg(org.orgId, 'two')
    }
  })
})
after(async () => { await c?.close() })

/** The messages the sink took from `address`, and the span in seconds from its first to its last. */
function from (address: string): { n: number, spanS: number } {
  const times = c.sink.messages.filter((m) => m.remoteAddress === address).map((m) => m.receivedAt).sort((a, b) => a - b)
  return { n: times.length, spanS: times.length < 2 ? 0 : (times.at(-1)! - times[0]!) / 1000 }
}

test('a source with its own lower limits is held to them while the pool\'s other source keeps the provider\'s', async (t) => {
  const msgs = Array.from({ length: COUNT },
    (_v, i) => queuedMessage(c.org, { to: [`user${i}@workspace.test`], track_opens: false, track_clicks: false }))
  for (const m of msgs) await c.publish(m)
  await eventually(() => c.sink.messages.length >= COUNT,
    () => `${COUNT} messages at the sink (have ${c.sink.messages.length})`, DELIVERED_WITHIN_MS)

  const copies = copiesAtSink(c.sink)
  for (const m of msgs) assert.equal(copies.get(messageIdOf(c.org, m)), 1, `${m.id} arrived once`)
  assert.equal(c.sink.messages.length, COUNT)

  const low = from(LOW)
  const full = from(FULL)
  const peak = (a: string): number => c.sink.peakOpenByAddress.get(a) ?? 0
  t.diagnostic(`${LOW}: ${low.n} messages in ${low.spanS.toFixed(2)} s, peak ${peak(LOW)} connections; ` +
    `${FULL}: ${full.n} in ${full.spanS.toFixed(2)} s, peak ${peak(FULL)}`)
  assert.equal(low.n + full.n, COUNT, 'every message came from one of the two sources')

  // the source with its own limits: one connection at a time, and its rate (a burst of one second's worth, then
  // the rate; 2 % for the clocks), however much mail waited for the pool
  assert.ok(low.n >= 1, 'the lowered source still sends')
  assert.ok(peak(LOW) <= OWN.maxConnections, `at most ${OWN.maxConnections} connection from ${LOW} (saw ${peak(LOW)})`)
  // the span is read at the sink, from the first arrival to the last: the first message arrives after its connection's
  // setup, so the span can be short of the time the rate allowed by that setup (half a second of the rate covers it)
  const lowBound = burstOf(OWN.messagesPerMinute) + 1.02 * (low.spanS + 0.5) * OWN.messagesPerMinute / 60
  assert.ok(low.n <= lowBound,
    `${low.n} messages from ${LOW} in ${low.spanS.toFixed(2)} s exceed its own rate (bound ${lowBound.toFixed(1)})`)

  // the other source: the provider's limits, not the lowered source's
  assert.ok(peak(FULL) <= PROVIDER.maxConnections, `at most ${PROVIDER.maxConnections} connections from ${FULL} (saw ${peak(FULL)})`)
  assert.ok(peak(FULL) > OWN.maxConnections, `${FULL} opened more connections than the other source's own cap (saw ${peak(FULL)})`)
  const fullBound = burstOf(PROVIDER.messagesPerMinute) + 1.02 * full.spanS * PROVIDER.messagesPerMinute / 60
  assert.ok(full.n <= fullBound, `${full.n} messages from ${FULL} exceed the provider's rate (bound ${fullBound.toFixed(1)})`)
  const heldToOwn = burstOf(OWN.messagesPerMinute) + 1.02 * full.spanS * OWN.messagesPerMinute / 60
  assert.ok(full.n > heldToOwn,
    `${full.n} messages from ${FULL} in ${full.spanS.toFixed(2)} s: more than the other source's own rate allows`)

  // operators read each lane's limits: the source's own over the provider's
  const lanes = await c.ob.request('GET', '/v1/operator/egress/lanes', { key: opKey })
  assert.equal(lanes.status, 200, lanes.text)
  const limitsOf = (lane: string): Record<string, unknown> | undefined =>
    (lanes.body.data as Array<{ lane: string, limits: Record<string, unknown> }>).find((l) => l.lane === lane)?.limits
  assert.deepEqual(limitsOf('mta3|google'), { maxConnections: 1, messagesPerConnection: 50, messagesPerMinute: 240, tls: 'required' })
  assert.deepEqual(limitsOf('mta2|google'), { maxConnections: 3, messagesPerConnection: 50, messagesPerMinute: 1200, tls: 'required' })

  // waiting for a lane is not an attempt
  await c.events.until(() => msgs.every((m) => c.events.of(m.id, 'delivered').length === 1), 30_000)
  assert.equal(c.events.events.filter((e) => e.type === 'deferred').length, 0, 'no deferral')
})
