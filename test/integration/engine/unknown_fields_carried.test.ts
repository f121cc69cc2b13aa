import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { STREAM_OUTBOUND } from '../../../protocol/mod.ts'
import type { TestOrg, TestOutbox } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { eventually } from '../../helpers/waiting.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'

/**
 * A queued message of this build's format with fields it does not know (what a newer gateway may add without a new
 * format) is delivered, and the fields travel with it untouched: after a deferral the stored message is the bytes
 * the gateway wrote. A message without `v` (the first format) is delivered as well.
 */
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let scenario: RelayScenario
const enc = new TextEncoder()

before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_DELIVERY_RETRY_SCHEDULE: '5,5' } }))
})
after(async () => { await scenario.close() })

test('unknown fields are carried through a deferral and the message is delivered; a message without a format version is ' +
  'delivered', async () => {
  const msg = Object.assign(queuedMessage(org, { to: ['tempfail1times@dest.example'], track_opens: false, track_clicks: false }), {
    priority_hint: 'high', routing: { lane: 'b', weights: [1, 2] }
  })
  const written = enc.encode(JSON.stringify(msg))
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  const { v: _v, ...unversioned } = queuedMessage(org, { to: ['first@dest.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, unversioned)

  await events.until(() => events.of(msg.id, 'deferred').length === 1)
  // deferred: handed back, still stored, byte for byte what was written
  const jsm = await jetstreamManager(ob.proc.nc)
  const stored = await eventually(async () => {
    const info = await jsm.streams.info(STREAM_OUTBOUND)
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
      const m = await jsm.streams.getMessage(STREAM_OUTBOUND, { seq }).catch(() => null)
      if (m !== null && m.json<{ id: string }>().id === msg.id) return m
    }
    return undefined
  }, 'the deferred message in the outbound stream')
  assert.deepEqual(Buffer.from(stored.data), Buffer.from(written))

  await events.until(() => events.of(msg.id, 'delivered').length === 1 && events.of(unversioned.id, 'delivered').length === 1)
  assert.equal(sink.to('tempfail1times@dest.example').length, 1)
  assert.equal(sink.to('first@dest.example').length, 1)
  assert.deepEqual(events.events.filter((e) => e.type === 'failed'), [])
})
