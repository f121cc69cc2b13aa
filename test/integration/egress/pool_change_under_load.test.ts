import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { queuedMessage } from '../../helpers/engine_env.ts'
import { eventually } from '../../helpers/waiting.ts'
import { copiesAtSink, DELIVERED_WITHIN_MS, messageIdOf, startEgressCluster, type EgressCluster } from './egress_cluster.ts'

// The operator changes the egress configuration while mail flows to two providers: a source is removed (deleted),
// another is added to the pool, then the organisation is assigned another pool. Routing is resolved per attempt, so
// queued mail follows each change; no message is lost, sent twice or bounced, and once the engine routes by the new
// configuration and the connections open from a source that left have closed, none opens from it again.
const COUNT = 300
const PER_MINUTE = 300 // per lane (source × provider): slow enough that the changes land while mail flows
const ADDRESS = { mta2: '127.0.0.2', mta3: '127.0.0.3', mta4: '127.0.0.4', mta5: '127.0.0.5' } as const

let c: EgressCluster

before(async () => {
  c = await startEgressCluster({
    engines: 1,
    configure: async (ob, org) => {
      const egress = ob.proc.cp.egress
      for (const [name, address] of Object.entries(ADDRESS)) await egress.addSource({ name, address, ehlo: `${name}.outbox.test` })
      await egress.putPool('first', [{ source: 'mta2' }, { source: 'mta3' }])
      await egress.putPool('second', [{ source: 'mta5' }])
      await egress.assignOrg(org.orgId, 'first')
      await egress.putLimits({ google: { messagesPerMinute: PER_MINUTE }, default: { messagesPerMinute: PER_MINUTE } })
    }
  })
})
after(async () => { await c?.close() })

const from = (address: string): number => c.sink.messages.filter((m) => m.remoteAddress === address).length
const sessions = (address: string): number => c.sink.connectionsByAddress.get(address) ?? 0
const open = (address: string): boolean => (c.sink.openByAddress.get(address) ?? 0) > 0

test('removing and adding sources and reassigning the pool under load delivers every message once from the sources in force', async (t) => {
  const egress = c.ob.proc.cp.egress
  const msgs = Array.from({ length: COUNT }, (_v, i) =>
    queuedMessage(c.org, { to: [`u${i}@${i % 2 === 0 ? 'workspace' : 'small'}.test`], track_opens: false, track_clicks: false }))
  const publishing = (async () => { for (const m of msgs) await c.publish(m) })()

  await eventually(() => c.sink.messages.length >= COUNT / 5, 'a fifth delivered', DELIVERED_WITHIN_MS)
  // mta2 leaves (taken out of `first` and deleted), mta4 joins
  await egress.removeSource('mta2')
  await egress.putPool('first', [{ source: 'mta3' }, { source: 'mta4' }])
  await eventually(() => from(ADDRESS.mta4) > 0 && !open(ADDRESS.mta2), 'mail from mta4 and mta2\'s connections closed', 30_000)
  const mta2Sessions = sessions(ADDRESS.mta2)
  t.diagnostic(`change 1 seen at ${c.sink.messages.length} delivered; mta2 opened ${mta2Sessions} sessions`)

  await eventually(() => c.sink.messages.length >= COUNT / 2, 'half delivered', DELIVERED_WITHIN_MS)
  // the organisation moves to `second`
  await egress.assignOrg(c.org.orgId, 'second')
  await eventually(() => from(ADDRESS.mta5) > 0 && !open(ADDRESS.mta3) && !open(ADDRESS.mta4),
    'mail from mta5 and the connections of mta3 and mta4 closed', 30_000)
  const mta3Sessions = sessions(ADDRESS.mta3)
  const mta4Sessions = sessions(ADDRESS.mta4)
  t.diagnostic(`change 2 seen at ${c.sink.messages.length} delivered`)

  await publishing
  await c.events.until(() => msgs.every((m) => c.events.of(m.id, 'delivered').length === 1), DELIVERED_WITHIN_MS)
  const copies = copiesAtSink(c.sink)
  for (const m of msgs) assert.equal(copies.get(messageIdOf(c.org, m)), 1, `${m.id} arrived once`)
  assert.equal(c.sink.messages.length, COUNT)
  assert.deepEqual(c.events.events.filter((e) => e.type === 'bounced' || e.type === 'failed').map((e) => String(e.data.to)), [],
    'none bounced or failed')
  t.diagnostic(`from mta2 ${from(ADDRESS.mta2)}, mta3 ${from(ADDRESS.mta3)}, mta4 ${from(ADDRESS.mta4)}, mta5 ${from(ADDRESS.mta5)}`)

  assert.equal(sessions(ADDRESS.mta2), mta2Sessions, 'no connection from mta2 once it had left and its connections closed')
  assert.equal(sessions(ADDRESS.mta3), mta3Sessions, 'none from mta3 after the organisation moved')
  assert.equal(sessions(ADDRESS.mta4), mta4Sessions, 'none from mta4 after the organisation moved')
  assert.ok(from(ADDRESS.mta5) > 0 && from(ADDRESS.mta2) > 0, 'the first and the last pool both carried mail')
})
