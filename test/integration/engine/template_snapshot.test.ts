// test-group: long-wait — a send scheduled 65 s ahead
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { newId } from '../../../protocol/mod.ts'

const PROMISE = 'The template is read when the message is accepted, so editing or deleting it later does not change messages already queued'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher
let key: string

let scenario: RelayScenario
before(async () => {
  ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_ROLE: 'all' } }))
  key = await ob.key(org, ['send'])
})
after(async () => { await scenario.close() })

async function createTemplate (): Promise<string> {
  const r = await ob.request('POST', '/v1/templates', {
    key: org.adminKey,
    body: {
      name: 'receipt', subject: 'Receipt {{order}}', html: '<p>Order {{order}} for {{name}}</p>', text: 'Order {{order}} for {{name}}'
    }
  })
  assert.equal(r.status, 201, r.text)
  return r.body.id
}

test('docs/sending.md promises that a queued message keeps its template', () => {
  const doc = readFileSync(new URL('../../../../docs/sending.md', import.meta.url), 'utf8').replace(/\s+/g, ' ')
  assert.ok(doc.includes(PROMISE), 'the sentence this file tests is in the docs')
})

test(PROMISE + ': a send scheduled a minute ahead goes out as accepted after its template was edited and deleted', async () => {
  const id = await createTemplate()
  const at = new Date(Date.now() + 65_000)
  const r = await ob.request('POST', '/v1/messages/send', {
    key,
    body: {
      from: `Shop <shop@${org.domain}>`, to: 'buyer@dest.example', template_id: id, variables: { order: '42', name: '<Ann>' },
      scheduled_at: at.toISOString(), track_opens: false
    }
  })
  assert.equal(r.status, 202, r.text)
  assert.equal(r.body.status, 'scheduled')
  const edited = await ob.request('PATCH', `/v1/templates/${id}`, {
    key: org.adminKey, body: { subject: 'Changed', html: '<p>Changed</p>', text: 'Changed' }
  })
  assert.equal(edited.status, 200, edited.text)
  const deleted = await ob.request('DELETE', `/v1/templates/${id}`, { key: org.adminKey })
  assert.ok(deleted.status === 204 || deleted.status === 200, deleted.text)

  await events.until(() => events.of(r.body.id).length > 0, 120_000)
  assert.deepEqual(events.of(r.body.id).map((e) => e.type), ['delivered'])
  assert.equal(events.of(r.body.id, 'delivered')[0]!.data.subject, 'Receipt 42')
  const m = sink.to('buyer@dest.example')[0]!
  assert.ok(m.receivedAt >= at.getTime())
  assert.equal(m.headers.get('subject'), 'Receipt 42')
  const raw = m.raw.toString('utf8')
  assert.match(raw, /Order 42 for &lt;Ann&gt;/)
  assert.match(raw, /Order 42 for <Ann>/)
  assert.doesNotMatch(raw, /Changed/)
})

test('a subject in the request replaces the template subject, rendered with the same variables', async () => {
  const id = await createTemplate()
  const r = await ob.request('POST', '/v1/messages/send', {
    key,
    body: {
      from: `Shop <shop@${org.domain}>`, to: 'own-subject@dest.example', subject: 'Your order {{order}} shipped', template_id: id,
      variables: { order: '7', name: 'Bo' }
    }
  })
  assert.equal(r.status, 202, r.text)
  await events.until(() => events.of(r.body.id, 'delivered').length === 1)
  assert.equal(events.of(r.body.id, 'delivered')[0]!.data.subject, 'Your order 7 shipped')
  const m = sink.to('own-subject@dest.example')[0]!
  assert.equal(m.headers.get('subject'), 'Your order 7 shipped')
  assert.match(m.raw.toString('utf8'), /Order 7 for Bo/)
})

test(PROMISE + ': editing and then deleting the template right after the send, with no pause, changes nothing delivered', async () => {
  const id = await createTemplate()
  const r = await ob.request('POST', '/v1/messages/send', {
    key,
    body: {
      from: `Shop <shop@${org.domain}>`, to: 'back-to-back@dest.example', template_id: id, variables: { order: '9', name: 'Cy' },
      track_opens: false
    }
  })
  assert.equal(r.status, 202, r.text)
  const edited = await ob.request('PATCH', `/v1/templates/${id}`, {
    key: org.adminKey, body: { subject: 'Changed', html: '<p>Changed</p>', text: 'Changed' }
  })
  assert.equal(edited.status, 200, edited.text)
  const deleted = await ob.request('DELETE', `/v1/templates/${id}`, { key: org.adminKey })
  assert.ok(deleted.status === 204 || deleted.status === 200, deleted.text)

  await events.until(() => events.of(r.body.id).length > 0)
  assert.deepEqual(events.of(r.body.id).map((e) => e.type), ['delivered'])
  const m = sink.to('back-to-back@dest.example')[0]!
  assert.equal(m.headers.get('subject'), 'Receipt 9')
  const raw = m.raw.toString('utf8')
  assert.match(raw, /Order 9 for Cy/)
  assert.doesNotMatch(raw, /Changed/)
})

test('a template message is rendered from the copy it carries, with its variables, HTML-escaped in html', async () => {
  const msg = queuedMessage(org, {
    to: ['tpl@dest.example'], subject: 'Hi {{name}}', html: '<p>Hello {{ name }}</p>', text: 'Hello {{name}}', template_id: newId('tpl'),
    variables: { name: '<Ann & Bo>' }, track_opens: false
  })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const m = sink.to('tpl@dest.example')[0]!
  assert.equal(m.headers.get('subject'), 'Hi <Ann & Bo>')
  assert.match(m.raw.toString('utf8'), /Hello &lt;Ann &amp; Bo&gt;/)
  assert.match(m.raw.toString('utf8'), /Hello <Ann & Bo>/)
  assert.equal(events.of(msg.id, 'delivered')[0]!.data.subject, 'Hi <Ann & Bo>')
})
