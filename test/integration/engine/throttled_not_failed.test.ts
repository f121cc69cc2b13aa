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
  sink = await SmtpSink.start()
  ob = await TestOutbox.start({ env: { OB_SMTP_RELAY: sink.url, OB_ROLE: 'engine', OB_DELIVERY_HOST_RATE: '2' } })
  org = await ob.org()
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await sink.close()
})

test('sends over the destination rate wait and go out later, without a deferral', async () => {
  const msgs = Array.from({ length: 6 }, (_v, i) => queuedMessage(org, { to: [`t${i}@dest.example`] }))
  for (const m of msgs) await publishQueued(ob.proc.nc, ob.proc.config, m)
  await events.until(() => msgs.every((m) => events.of(m.id, 'delivered').length === 1), 20_000)
  assert.equal(events.events.filter((e) => e.type !== 'delivered').length, 0)
  const times = msgs.map((m) => Date.parse(String(events.of(m.id, 'delivered')[0]!.data.delivered_at))).sort((a, b) => a - b)
  assert.ok(times[5]! - times[0]! >= 1000, 'six sends at 2/s (burst 2) spread over more than a second')
  assert.equal(sink.messages.length, 6)
})
