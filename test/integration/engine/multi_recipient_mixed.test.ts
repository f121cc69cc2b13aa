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
// retries after 1 s; the long last step only widens the give-up span (32 s from acceptance), so a slow first
// attempt on a loaded machine does not turn the retry into a bounce by age
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({
    sink: { tempfailTimes: 1 }, env: { OB_DELIVERY_RETRY_SCHEDULE: '1,1,30' }
  }))
})
after(async () => { await scenario.close() })

test('each recipient gets its own outcome; a retry only goes to the recipient that was deferred', async () => {
  // The schedule's span (3 s) counts from acceptance: a first message settles the engine's start-up first.
  const warm = queuedMessage(org, { to: ['warm-up@dest.example'] })
  await publishQueued(ob.proc.nc, ob.proc.config, warm)
  await events.until(() => events.of(warm.id, 'delivered').length === 1)
  const msg = queuedMessage(org, {
    to: ['ok@dest.example', 'permfail@dest.example'], cc: ['tempfail@dest.example'], bcc: ['hidden@dest.example']
  })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 3 && events.of(msg.id, 'bounced').length === 1)
  await nothingHappensFor(1500) // a retry sent again to a recipient with its outcome would be at the sink by now
  const by = (type: string): string[] => events.of(msg.id, type).map((e) => String(e.data.to)).sort()
  assert.deepEqual(by('delivered'), ['hidden@dest.example', 'ok@dest.example', 'tempfail@dest.example'])
  assert.deepEqual(by('bounced'), ['permfail@dest.example'])
  assert.deepEqual(by('deferred'), ['tempfail@dest.example'])
  assert.equal(sink.to('ok@dest.example').length, 1, 'not sent again with the retry')
  assert.equal(sink.to('hidden@dest.example').length, 1)
  assert.equal(sink.to('tempfail@dest.example').length, 1)
  const ok = sink.to('ok@dest.example')[0]!
  assert.match(ok.headers.get('to') ?? '', /ok@dest\.example.*permfail@dest\.example/)
  assert.match(ok.headers.get('cc') ?? '', /tempfail@dest\.example/)
  assert.equal(ok.headers.get('bcc'), undefined)
  assert.notEqual(ok.mailFrom, sink.to('hidden@dest.example')[0]!.mailFrom, 'VERP return path differs per recipient')
})
