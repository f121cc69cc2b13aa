import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { newId, outboundConsumer, outboundSubject, shardOf, STREAM_OUTBOUND } from '../../../protocol/mod.ts'

/**
 * The engine decodes every stream message against the queued-message schema before it reads a field. A message
 * that fails (not JSON, wrong types, missing fields, unknown or huge fields, a template without its copied body)
 * is never ended for it (it may come from a newer engine): it is handed back for an hour, counted and logged with
 * its first problem; the shard that took it goes on delivering.
 */
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let logs: Array<Record<string, unknown>>
const enc = new TextEncoder()

let scenario: RelayScenario
before(async () => { ({ sink, ob, org, events, logs } = scenario = await startRelayScenario({ logLevel: 'warn' })) })
after(async () => { await scenario.close() })

const handedBack = (): string[] => logs.filter((l) => l.msg === 'outbound message this engine cannot read; handed back for a newer engine')
  .map((l) => String(l.problem))

test('malformed queued messages published into the stream are handed back for an hour with their first problem, never ended; ' +
  'a good one on the same shard still delivers', async () => {
  const good = queuedMessage(org, { to: ['good@dest.example'], track_opens: false, track_clicks: false })
  const subject = outboundSubject(shardOf(good.id, ob.proc.config.engine.shards))
  const { to: _to, created_at: _created, ...withoutTo } = queuedMessage(org, { to: ['missing@dest.example'] })
  const tplId = newId('tpl')
  const now = new Date().toISOString()
  await ob.proc.cp.templates.put(`${org.orgId}.${tplId}`, {
    id: tplId, org_id: org.orgId, name: 't', subject: 'Live {{n}}', html: '<p>Live</p>', created_at: now, updated_at: now
  })
  const bad: Array<{ body: string, reason: RegExp }> = [
    { body: 'not json {', reason: /JSON/ },
    { body: 'null', reason: /^message / },
    { body: JSON.stringify([1, 2]), reason: /^message / },
    { body: JSON.stringify({ ...queuedMessage(org, { to: ['v2@dest.example'] }), v: 2 }), reason: /\/v / },
    { body: JSON.stringify({ ...queuedMessage(org, { to: ['types@dest.example'] }), to: 'types@dest.example' }), reason: /\/to / },
    { body: JSON.stringify({ ...queuedMessage(org, { to: ['types2@dest.example'] }), track_opens: 'yes' }), reason: /\/track_opens / },
    { body: JSON.stringify(withoutTo), reason: /required|\/to/ },
    { body: JSON.stringify({ ...queuedMessage(org, { to: ['extra@dest.example'] }), padding: 'x'.repeat(400_000) }), reason: /\/padding is not a field of the queued message/ },
    { body: JSON.stringify(queuedMessage(org, { to: ['long@dest.example'], subject: 'y'.repeat(400_000) })), reason: /\/subject / },
    { body: JSON.stringify(queuedMessage(org, { to: ['many@dest.example'], metadata: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, 'v'])) })), reason: /\/metadata / },
    // A template message without the body copied in is refused too: the engine never renders the live template.
    { body: JSON.stringify(queuedMessage(org, { to: ['nocopy@dest.example'], html: undefined, text: undefined, template_id: tplId, variables: { n: 1 } })), reason: /required/ }
  ]
  const js = jetstream(ob.proc.nc)
  for (const b of bad) await js.publish(subject, enc.encode(b.body), { msgID: newId('msg') })
  await publishQueued(ob.proc.nc, ob.proc.config, good)

  await events.until(() => events.of(good.id, 'delivered').length === 1)
  await eventually(() => handedBack().length === bad.length, () => `${bad.length} messages handed back; log: ${JSON.stringify(logs)}`)
  const reasons = handedBack()
  for (const b of bad) {
    assert.ok(reasons.some((r) => b.reason.test(r)), `a reason matching ${String(b.reason)} in ${JSON.stringify(reasons)}`)
  }
  for (const r of reasons) assert.ok(r.length < 500, r)
  // Only the good message reached the sink or made an event.
  assert.deepEqual(sink.messages.map((m) => m.rcptTo), [['good@dest.example']])
  assert.deepEqual(events.events.map((e) => e.message_id), [good.id])

  // Handed back for an hour: not redelivered a second later, and still stored for an engine that can read them.
  await nothingHappensFor(1000)
  assert.equal(handedBack().length, bad.length)
  const info = await (await jetstreamManager(ob.proc.nc)).consumers
    .info(STREAM_OUTBOUND, outboundConsumer(shardOf(good.id, ob.proc.config.engine.shards)))
  assert.equal(info.num_ack_pending, bad.length)
  assert.match(await ob.proc.metrics.render(), new RegExp(`^outbox_outbound_unreadable_total ${bad.length}$`, 'm'))
})
