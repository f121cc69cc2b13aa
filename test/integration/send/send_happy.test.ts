import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { shardOf, outboundSubject } from '../../../protocol/mod.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import { startGateway, outboundWithIds, sendKey, body, template } from './helpers.ts'

let ob: TestOutbox
let org: TestOrg
let key: string
before(async () => {
  ob = await startGateway()
  org = await ob.org('pro')
  key = await sendKey(ob, org)
})
after(async () => { await ob.close() })

test('send answers 202 queued after exactly one message landed in OB_OUTBOUND with the right fields', async () => {
  const r = await ob.request('POST', '/v1/messages/send', {
    key,
    body: body(org, {
      to: ['A <a@example.net>', 'b@example.net'],
      cc: 'c@example.net',
      bcc: ['d@example.net'],
      reply_to: `support@${org.domain}`,
      text: 'Hi',
      headers: { 'X-Campaign': 'spring' },
      metadata: { user_id: '42' },
      attachments: [{ filename: 'a.txt', content: Buffer.from('hello').toString('base64'), content_type: 'text/plain' }]
    })
  })
  assert.equal(r.status, 202, r.text)
  assert.match(r.body.id, /^msg_[0-9a-z]{26}$/)
  assert.equal(r.body.status, 'queued')
  assert.ok(!Number.isNaN(Date.parse(r.body.created_at)))
  assert.equal(r.body.suppressed, undefined)
  assert.equal(r.headers.get('ratelimit-limit'), '1000')
  assert.ok(r.headers.get('ratelimit-remaining') !== null)
  assert.ok(r.headers.get('ratelimit-reset') !== null)
  const stored = await outboundWithIds(ob, [r.body.id])
  assert.equal(stored.length, 1)
  const s = stored[0]!
  assert.equal(s.msgId, r.body.id)
  assert.equal(s.subject, outboundSubject(shardOf(r.body.id, ob.proc.config.engine.shards)))
  const m = s.msg
  assert.equal(m.v, 1)
  assert.equal(m.org_id, org.orgId)
  assert.equal(m.domain_id, org.domainId)
  assert.equal(m.environment, 'live')
  assert.equal(m.from, `App <hello@${org.domain}>`)
  assert.deepEqual(m.to, ['A <a@example.net>', 'b@example.net'])
  assert.deepEqual(m.cc, ['c@example.net'])
  assert.deepEqual(m.bcc, ['d@example.net'])
  assert.equal(m.reply_to, `support@${org.domain}`)
  assert.equal(m.subject, 'Hello')
  assert.equal(m.html, '<p>Hi</p>')
  assert.equal(m.text, 'Hi')
  assert.deepEqual(m.headers, { 'X-Campaign': 'spring' })
  assert.deepEqual(m.metadata, { user_id: '42' })
  assert.equal(m.attachments.length, 1)
  assert.equal(m.track_opens, true)
  assert.equal(m.track_clicks, true)
  assert.deepEqual(m.suppressed, [])
  assert.equal(m.created_at, r.body.created_at)
})

test('scheduled_at in the future answers status scheduled and carries the time', async () => {
  const at = new Date(Date.now() + 3600_000).toISOString()
  const r = await ob.request('POST', '/v1/messages/send', { key, body: body(org, { scheduled_at: at, track_opens: false }) })
  assert.equal(r.status, 202, r.text)
  assert.equal(r.body.status, 'scheduled')
  const [s] = await outboundWithIds(ob, [r.body.id])
  assert.equal(s!.msg.scheduled_at, at)
  assert.equal(s!.msg.track_opens, false)
})

test('a sandbox key goes through the same path and the message says environment test', async () => {
  const testKey = await sendKey(ob, org, 'test')
  const r = await ob.request('POST', '/v1/messages/send', { key: testKey, body: body(org, { to: 'bounce@example.net' }) })
  assert.equal(r.status, 202, r.text)
  const [s] = await outboundWithIds(ob, [r.body.id])
  assert.equal(s!.msg.environment, 'test')
})

test('a template of the organisation supplies subject and body; variables travel with the message', async () => {
  const t = await template(ob, org)
  const r = await ob.request('POST', '/v1/messages/send', {
    key, body: { from: `hello@${org.domain}`, to: 'u@example.net', template_id: t.id, variables: { name: 'Ann' } }
  })
  assert.equal(r.status, 202, r.text)
  const [s] = await outboundWithIds(ob, [r.body.id])
  assert.equal(s!.msg.template_id, t.id)
  assert.deepEqual(s!.msg.variables, { name: 'Ann' })
  assert.equal(s!.msg.subject, 'Welcome {{name}}')
  assert.equal(s!.msg.html, '<p>Hi {{name}}</p>')
})

test('batch answers 202 with one result per message in order, each stored once', async () => {
  const messages = [
    body(org, { to: 'one@example.net' }), body(org, { to: 'two@example.net', metadata: { n: '2' } }), body(org, { to: 'three@example.net' })
  ]
  const r = await ob.request('POST', '/v1/messages/batch', { key, body: { messages } })
  assert.equal(r.status, 202, r.text)
  assert.equal(r.body.data.length, 3)
  const ids = r.body.data.map((d: { id: string }) => d.id)
  assert.equal(new Set(ids).size, 3)
  for (const d of r.body.data) assert.equal(d.status, 'queued')
  const stored = await outboundWithIds(ob, ids)
  assert.equal(stored.length, 3)
  const byId = new Map(stored.map((s) => [s.msg.id, s.msg]))
  assert.deepEqual(byId.get(ids[0])!.to, ['one@example.net'])
  assert.deepEqual(byId.get(ids[1])!.metadata, { n: '2' })
  assert.deepEqual(byId.get(ids[2])!.to, ['three@example.net'])
})
