import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { newId } from '../../../protocol/mod.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario()) })
after(async () => { await scenario.close() })

test('a template message is rendered from the copy it carries, with its variables, HTML-escaped in html', async () => {
  const msg = queuedMessage(org, { to: ['tpl@dest.example'], subject: 'Hi {{name}}', html: '<p>Hello {{ name }}</p>', text: 'Hello {{name}}', template_id: newId('tpl'), variables: { name: '<Ann & Bo>' }, track_opens: false })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const m = sink.to('tpl@dest.example')[0]!
  assert.equal(m.headers.get('subject'), 'Hi <Ann & Bo>')
  assert.match(m.raw.toString('utf8'), /Hello &lt;Ann &amp; Bo&gt;/)
  assert.match(m.raw.toString('utf8'), /Hello <Ann & Bo>/)
  assert.equal(events.of(msg.id, 'delivered')[0]!.data.subject, 'Hi <Ann & Bo>')
})
