import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { MessageStore } from '../../../stores/read_model/mod.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario()) })
after(async () => { await scenario.close() })

test('a scheduled message waits until scheduled_at, then goes out once with no deferral', async () => {
  const at = new Date(Date.now() + 3000)
  const msg = queuedMessage(org, { to: ['later@dest.example'], scheduled_at: at.toISOString() })
  const now = queuedMessage(org, { to: ['now@dest.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await publishQueued(ob.proc.nc, ob.proc.config, now)
  await events.until(() => events.of(now.id, 'delivered').length === 1)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  // judged by when it arrived, not by whether it was there when the other arrived: on a busy machine the message
  // sent at once may take longer than the 3 s the scheduled one waits
  const later = sink.to('later@dest.example')
  assert.equal(later.length, 1)
  assert.ok(later[0]!.receivedAt >= at.getTime() - 250, `not before its time: ${later[0]!.receivedAt - at.getTime()} ms`)
  assert.ok(Date.parse(String(events.of(msg.id, 'delivered')[0]!.data.delivered_at)) >= at.getTime() - 250)
  assert.deepEqual(events.of(msg.id).map((e) => e.type), ['delivered'])
  // counted as sent by the engine when it took the message up (record_sent), once, beside the one sent at once
  const stats = await new MessageStore(ob.proc.redis).stats(org.orgId, Date.now() - 3600_000, Date.now() + 3600_000)
  assert.equal(stats.counts.sent, 2)
})
