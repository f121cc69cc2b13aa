import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

before(async () => {
  sink = await SmtpSink.start({ tempfailTimes: 2 })
  ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: sink.url, OB_ROLE: 'engine', OB_DELIVERY_RETRY_SCHEDULE: '1,1,1' } })
  org = await ob.org()
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
})

test('451 twice, then accepted: two deferred events (attempts 1 and 2), then delivered once', async () => {
  const msg = queuedMessage(org, { to: ['tempfail@dest.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const deferred = events.of(msg.id, 'deferred')
  assert.deepEqual(deferred.map((e) => e.data.attempt), [1, 2])
  const d = deferred[0]!.data
  assert.deepEqual(Object.keys(d).sort(), ['attempt', 'deferred_at', 'from', 'message_id', 'metadata', 'next_attempt_at', 'smtp_response', 'subject', 'to'])
  assert.match(String(d.smtp_response), /^451 4\.7\.1/)
  const gap = Date.parse(String(d.next_attempt_at)) - Date.parse(String(d.deferred_at))
  assert.equal(gap, 1000, 'next attempt per OB_DELIVERY_RETRY_SCHEDULE')
  assert.notEqual(deferred[0]!.id, deferred[1]!.id)
  assert.equal(sink.to('tempfail@dest.example').length, 1)
  assert.deepEqual(sink.rcptLog, ['tempfail@dest.example 451', 'tempfail@dest.example 451', 'tempfail@dest.example 250'])
})
