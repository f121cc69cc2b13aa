// test-group: long-wait — an SMTP server that takes 3.5 s to answer DATA, then a wait for a redelivery that must not come
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { nothingHappensFor } from '../../helpers/waiting.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
// ack_wait of 1 s against a 3.5 s DATA reply: only working() keeps JetStream from redelivering mid-transaction
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({
    sink: { slowMs: 3500 }, env: { OB_ENGINE_ACK_WAIT_MS: '1000' }
  }))
})
after(async () => { await scenario.close() })

test('a server slower than ack_wait still gets the message exactly once', async () => {
  const msg = queuedMessage(org, { to: ['slow@dest.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  await nothingHappensFor(2500) // a redelivery would have started by now
  assert.equal(sink.rcptLog.length, 1)
  assert.equal(sink.to('slow@dest.example').length, 1)
  assert.equal(events.of(msg.id).length, 1)
})
