import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'

// Recipients at a domain that answers 451 forever, enough of them to get it suspended. Each gives up (`bounced`,
// `soft`) by age: once the schedule's whole span has passed since its message was accepted, and never before a
// real attempt. Turns spent waiting for the suspension to end are not attempts: no deferred event, no count.
const RECIPIENTS = 8
const SCHEDULE_S = [1, 1, 2]
const SPAN_MS = SCHEDULE_S.reduce((a, b) => a + b, 0) * 1000

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({
    sink: { tempfailTimes: Number.MAX_SAFE_INTEGER },
    env: { OB_DELIVERY_RETRY_SCHEDULE: SCHEDULE_S.join(','), OB_SMTP_POOL_CONNECTIONS: '2' }
  }))
})
after(async () => { await scenario.close() })

test('an always deferred recipient bounces soft after the schedule span since acceptance ' +
  'and after a real attempt', { timeout: 60_000 }, async () => {
  const msgs = Array.from({ length: RECIPIENTS }, (_, i) => queuedMessage(org, { to: [`tempfail${i}@down.example`] }))
  for (const m of msgs) await publishQueued(ob.proc.nc, ob.proc.config, m)
  await events.until(() => msgs.every((m) => events.of(m.id, 'bounced').length === 1), 40_000)
  for (const [i, m] of msgs.entries()) {
    const rcpt = `tempfail${i}@down.example`
    const b = events.of(m.id, 'bounced')[0]!.data
    assert.equal(b.bounce_type, 'soft')
    assert.equal(b.bounce_code, '451')
    assert.equal(b.bounce_category, 'policy', '4.7.1 is a policy reply')
    const age = Date.parse(String(b.bounced_at)) - Date.parse(m.created_at)
    assert.ok(age >= SPAN_MS - 50, `${rcpt} gave up ${age} ms after acceptance (span ${SPAN_MS} ms)`)
    const real = sink.rcptLog.filter((l) => l.startsWith(`${rcpt} `)).length
    assert.ok(real >= 1, `${rcpt} was really attempted`)
    const deferred = events.of(m.id, 'deferred').map((e) => Number(e.data.attempt))
    assert.deepEqual(deferred, deferred.map((_, n) => n + 1), `${rcpt}: attempts counted one by one`)
    // the give-up is a real attempt (no deferred event for it) or a turn while the domain was suspended
    assert.ok(deferred.length === real || deferred.length === real - 1,
      `${rcpt}: ${deferred.length} deferred events for ${real} real attempts`)
  }
})
