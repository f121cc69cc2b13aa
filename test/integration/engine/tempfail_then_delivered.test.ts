import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
// retries after 1 s; the long last step only widens the give-up span (32 s from acceptance), so a slow first
// attempt on a loaded machine does not turn the retry into a bounce by age
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({
    sink: { tempfailTimes: 2 }, env: { OB_DELIVERY_RETRY_SCHEDULE: '1,1,30' }
  }))
})
after(async () => { await scenario.close() })

test('451 twice, then accepted: two deferred events (attempts 1 and 2), then delivered once', async () => {
  const msg = queuedMessage(org, { to: ['tempfail@dest.example'], tags: ['digest'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const deferred = events.of(msg.id, 'deferred')
  assert.deepEqual(deferred.map((e) => e.data.attempt), [1, 2])
  const d = deferred[0]!.data
  assert.deepEqual(Object.keys(d).sort(),
    ['attempt', 'deferred_at', 'from', 'message_id', 'metadata', 'next_attempt_at', 'smtp_response', 'subject', 'tags', 'to'])
  assert.deepEqual(d.tags, ['digest'])
  assert.match(String(d.smtp_response), /^451 4\.7\.1/)
  const gap = Date.parse(String(d.next_attempt_at)) - Date.parse(String(d.deferred_at))
  assert.equal(gap, 1000, 'next attempt per OB_DELIVERY_RETRY_SCHEDULE')
  assert.notEqual(deferred[0]!.id, deferred[1]!.id)
  assert.equal(sink.to('tempfail@dest.example').length, 1)
  assert.deepEqual(sink.rcptLog, ['tempfail@dest.example 451', 'tempfail@dest.example 451', 'tempfail@dest.example 250'])
})
