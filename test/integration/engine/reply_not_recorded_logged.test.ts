import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { deliveryStateKey } from '../../../engine/delivery_state_layout.ts'
import { CLOCK_SKEW_MS } from '../../../engine/connection_epoch.ts'
import { sleepUntil } from '../../helpers/waiting.ts'

/**
 * The shard thread writes each final SMTP reply to the message's delivery state as it arrives. When Redis refuses
 * that write (here: the key holds a value of another type, so Redis answers WRONGTYPE), the message is still
 * delivered once and the failure is logged with the message id, the recipient and the error's code.
 */
let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let engineStartedAt = 0
const logs: Array<Record<string, unknown>> = []
before(async () => {
  sink = await SmtpSink.start()
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as Record<string, unknown>); cb() } })
  ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: sink.url, OB_ROLE: 'engine' }, log: { level: 'warn', stream } })
  // taken once the engine has started (its connection epoch began before this), however long the start took
  engineStartedAt = Date.now()
  org = await ob.org()
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
})

test('a reply the thread cannot record is logged with message id, recipient and code; the message goes out once', async () => {
  const msg = queuedMessage(org, { to: ['kept@dest.example'] })
  await ob.proc.redis.set(deliveryStateKey(msg.id), 'not a hash')
  // A message published within the clock-skew margin of the engine's start may repeat one a restarted NATS server
  // forgot, so its delivery state is read first, which the key of another type would refuse; published after the
  // margin, its first delivery goes straight to the shard's thread, whose write is what this test is about.
  await sleepUntil(engineStartedAt + CLOCK_SKEW_MS + 500)
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  assert.equal(sink.to('kept@dest.example').length, 1)
  const lines = logs.filter((l) =>
    l.msg === 'SMTP reply not recorded when it arrived; a crash before the delivery state is saved would send again')
  assert.equal(lines.length, 1, JSON.stringify(logs))
  assert.equal(lines[0]!.message_id, msg.id)
  assert.equal(lines[0]!.recipient, 'kept@dest.example')
  assert.equal(lines[0]!.code, 'WRONGTYPE')
  assert.equal(lines[0]!.level, 40)
})
