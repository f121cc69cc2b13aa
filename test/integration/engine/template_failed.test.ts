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

test('a template is rendered with its variables, HTML-escaped in html', async () => {
  const id = newId('tpl')
  const now = new Date().toISOString()
  await ob.proc.cp.templates.put(`${org.orgId}.${id}`, { id, org_id: org.orgId, name: 't', subject: 'Hi {{name}}', html: '<p>Hello {{ name }}</p>', text: 'Hello {{name}}', created_at: now, updated_at: now })
  const msg = queuedMessage(org, { to: ['tpl@dest.example'], subject: '', html: undefined, text: undefined, template_id: id, variables: { name: '<Ann & Bo>' }, track_opens: false })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const m = sink.to('tpl@dest.example')[0]!
  assert.equal(m.headers.get('subject'), 'Hi <Ann & Bo>')
  assert.match(m.raw.toString('utf8'), /Hello &lt;Ann &amp; Bo&gt;/)
  assert.equal(events.of(msg.id, 'delivered')[0]!.data.subject, 'Hi <Ann & Bo>')
})

test('a message queued without a copy of its template, whose template was deleted, fails and is not retried', async () => {
  const msg = queuedMessage(org, { to: ['gone@dest.example'], html: undefined, text: undefined, template_id: newId('tpl') })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'failed').length === 1)
  const d = events.of(msg.id, 'failed')[0]!.data
  assert.match(String(d.reason), /template .* no longer exists/)
  await new Promise((resolve) => setTimeout(resolve, 1000))
  assert.equal(events.of(msg.id).length, 1)
  assert.equal(sink.to('gone@dest.example').length, 0)
})
