import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { nothingHappensFor } from '../../helpers/waiting.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario()) })
after(async () => { await scenario.close() })

test('a 550 at RCPT is a hard bounce: bounced event, address suppressed, no retry', async () => {
  const msg = queuedMessage(org, { to: ['permfail@dest.example'], tags: ['reset-password'] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'bounced').length === 1)
  const d = events.of(msg.id, 'bounced')[0]!.data
  assert.deepEqual(Object.keys(d).sort(), [
    'bounce_category', 'bounce_code', 'bounce_message', 'bounce_type', 'bounced_at', 'from', 'message_id', 'metadata', 'subject', 'tags',
    'to'
  ])
  assert.deepEqual(d.tags, ['reset-password'])
  assert.equal(d.bounce_type, 'hard')
  assert.equal(d.bounce_code, '550')
  assert.match(String(d.bounce_message), /550 5\.1\.1 mailbox unavailable/)
  assert.equal(d.to, 'permfail@dest.example')
  const rec = ob.proc.cp.suppressions.get(suppressionKey(org.orgId, 'permfail@dest.example'))
  assert.equal(rec?.reason, 'hard_bounce')
  assert.equal(rec?.message_id, msg.id)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'PermFail@Dest.example'), true)
  await nothingHappensFor(1500) // a retry would be at the sink by now
  assert.equal(sink.rcptLog.filter((l) => l.startsWith('permfail@')).length, 1, 'tried exactly once')
  assert.equal(events.of(msg.id).length, 1)
})
