import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually, nothingHappensFor } from '../../helpers/waiting.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import {
  QUEUED_FORMAT_VERSION, newId, outboundConsumer, outboundSubject, shardOf, STREAM_OUTBOUND, type FailedData
} from '../../../protocol/mod.ts'

/**
 * The engine decodes every stream message against the queued-message schema before it reads a field; no message is
 * ended without an event. One with a field the schema does not know is delivered. One that breaks the schema of a
 * format the engine reads (a known field of the wrong type, too long, missing, a template without its copied body)
 * ends `failed` (`unbuildable`, the first problem as the reason) for every recipient it names. One of a newer
 * format is handed back for a newer engine and counted. One that names no message, organisation or recipient has
 * nobody to tell: it is handed back for an hour, counted and logged with its first problem. The shard that took
 * them goes on delivering.
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

const handedBack = (): string[] => logs.filter((l) => l.msg === 'outbound message this engine cannot read; handed back for an hour')
  .map((l) => String(l.problem))
const newerLines = (): Array<Record<string, unknown>> =>
  logs.filter((l) => l.msg === 'queued message of a newer format than this engine reads; handed back for a newer engine')

test('malformed queued messages end failed with their first problem, or wait when they name nobody; a newer format ' +
  'waits for a newer engine; unknown fields are carried; a good message on the same shard still delivers', async () => {
  const good = queuedMessage(org, { to: ['good@dest.example'], track_opens: false, track_clicks: false })
  const subject = outboundSubject(shardOf(good.id, ob.proc.config.engine.shards))
  const { to: _to, created_at: _created, ...withoutTo } = queuedMessage(org, { to: ['missing@dest.example'] })
  const tplId = newId('tpl')
  const now = new Date().toISOString()
  await ob.proc.cp.templates.put(`${org.orgId}.${tplId}`, {
    id: tplId, org_id: org.orgId, name: 't', subject: 'Live {{n}}', html: '<p>Live</p>', created_at: now, updated_at: now
  })
  // nobody to tell: no message, no organisation or no recipient can be read
  const nobody: Array<{ body: string, reason: RegExp }> = [
    { body: 'not json {', reason: /JSON/ },
    { body: 'null', reason: /^message / },
    { body: JSON.stringify([1, 2]), reason: /^message / },
    { body: JSON.stringify(withoutTo), reason: /required|\/to/ },
    { body: JSON.stringify({ ...queuedMessage(org, { to: ['noorg@dest.example'] }), org_id: 42 }), reason: /\/org_id / }
  ]
  const broken = (to: string, fields: Record<string, unknown>, reason: RegExp): { to: string, body: string, reason: RegExp } =>
    ({ to, body: JSON.stringify({ ...queuedMessage(org, { to: [to] }), ...fields }), reason })
  const failing = [
    broken('types@dest.example', { to: 'types@dest.example' }, /\/to /),
    broken('types2@dest.example', { track_opens: 'yes' }, /\/track_opens /),
    broken('version@dest.example', { v: 'two' }, /\/v /),
    broken('long@dest.example', { subject: 'y'.repeat(400_000) }, /\/subject /),
    broken('many@dest.example', { metadata: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, 'v'])) }, /\/metadata /),
    // A template message without the body copied in is refused too: the engine never renders the live template.
    broken('nocopy@dest.example', { html: undefined, text: undefined, template_id: tplId, variables: { n: 1 } }, /required|anyOf|must/)
  ]
  const newer = { ...queuedMessage(org, { to: ['newer@dest.example'] }), v: QUEUED_FORMAT_VERSION + 1 }
  const extra = { ...queuedMessage(org, { to: ['extra@dest.example'] }), padding: 'x'.repeat(400_000), future: { nested: [1] } }

  const js = jetstream(ob.proc.nc)
  for (const b of [...nobody, ...failing]) await js.publish(subject, enc.encode(b.body), { msgID: newId('msg') })
  for (const m of [newer, extra]) await js.publish(subject, enc.encode(JSON.stringify(m)), { msgID: m.id })
  await publishQueued(ob.proc.nc, ob.proc.config, good)

  await events.until(() => events.of(good.id, 'delivered').length === 1 && events.of(extra.id, 'delivered').length === 1 &&
    events.events.filter((e) => e.type === 'failed').length === failing.length)
  await eventually(() => handedBack().length === nobody.length && newerLines().length === 1,
    () => `${nobody.length} messages handed back for an hour and one newer; log: ${JSON.stringify(logs).slice(0, 2000)}`)

  const reasons = handedBack()
  for (const b of nobody) {
    assert.ok(reasons.some((r) => b.reason.test(r)), `a reason matching ${String(b.reason)} in ${JSON.stringify(reasons)}`)
  }
  for (const r of reasons) assert.ok(r.length < 500, r)
  for (const f of failing) {
    const [e, ...more] = events.events.filter((x) => x.type === 'failed' && x.data.to === f.to)
    assert.ok(e !== undefined && more.length === 0, `one failed event for ${f.to}`)
    const data = e.data as unknown as FailedData
    assert.equal(data.failure_category, 'unbuildable')
    assert.match(data.reason, /^the queued message is malformed: /)
    assert.match(data.reason, f.reason)
    assert.ok(data.reason.length < 600, data.reason)
  }
  assert.deepEqual(newerLines()[0]!.format, QUEUED_FORMAT_VERSION + 1)
  // Only the good message and the one with unknown fields reached the sink.
  assert.deepEqual(sink.messages.map((m) => m.rcptTo).sort(), [['extra@dest.example'], ['good@dest.example']])

  // Those with nobody to tell are handed back for an hour, the newer one for the first retry step (60 s here): not
  // redelivered a second later, and still stored for an engine that can read them.
  await nothingHappensFor(1000)
  assert.equal(handedBack().length, nobody.length)
  const info = await (await jetstreamManager(ob.proc.nc)).consumers
    .info(STREAM_OUTBOUND, outboundConsumer(shardOf(good.id, ob.proc.config.engine.shards)))
  assert.equal(info.num_ack_pending, nobody.length + 1)
  const metrics = await ob.proc.metrics.render()
  assert.match(metrics, new RegExp(`^outbox_outbound_unreadable_total ${nobody.length}$`, 'm'))
  assert.match(metrics, /^outbox_outbound_newer_format_total 1$/m)
})
