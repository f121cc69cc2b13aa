import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'
import type { SmtpSink } from '../../helpers/smtp_sink.ts'
import { type EventWatcher, publishQueued, queuedMessage, startRelayScenario, type RelayScenario } from '../../helpers/engine_env.ts'
import { decodeVerp, verpIssuedTo } from '../../../protocol/mod.ts'

let sink: SmtpSink
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

let scenario: RelayScenario
before(async () => { ({ sink, ob, org, events } = scenario = await startRelayScenario({ env: { OB_PUBLIC_URL: 'https://mail.example.net' } })) })
after(async () => { await scenario.close() })

test('a queued message is delivered once over SMTP with its headers, and a delivered event is published', async () => {
  const msg = queuedMessage(org, { to: ['alice@dest.example'], metadata: { order: '42' } })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)

  const got = sink.to('alice@dest.example')
  assert.equal(got.length, 1)
  const m = got[0]!
  assert.equal(m.messageId, `<${msg.id}@${org.domain}>`)
  const verp = decodeVerp(m.mailFrom)
  assert.ok(verp !== undefined)
  assert.equal(verp.messageId, msg.id)
  assert.equal(verp.domain, org.domain)
  const signing = ob.proc.cp.verpKeys.signing()
  assert.equal(verp.keyId, signing.id)
  assert.equal(verpIssuedTo(verp, signing, 'alice@dest.example'), true, 'the return path is signed for its recipient')
  assert.match(m.headers.get('list-unsubscribe') ?? '', /^<https:\/\/mail\.example\.net\/t\/u\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+>, <mailto:bounces\+msg_[0-9a-z]+-[0-9a-z]{20}@bounces\./)
  assert.equal(m.headers.get('list-unsubscribe-post'), 'List-Unsubscribe=One-Click')
  assert.match(m.headers.get('dkim-signature') ?? '', new RegExp(`d=${org.domain.replace(/\./g, '\\.')}`))
  assert.equal(m.secure, true, 'opportunistic STARTTLS was used')
  const body = m.raw.toString('utf8')
  assert.match(body, /https:\/\/mail\.example\.net\/t\/o\//, 'open pixel')
  assert.match(body, /https:\/\/mail\.example\.net\/t\/c\//, 'tracked link')

  const [e] = events.of(msg.id, 'delivered')
  assert.equal(e!.org_id, org.orgId)
  const d = e!.data
  assert.deepEqual(Object.keys(d).sort(), ['delivered_at', 'from', 'message_id', 'metadata', 'smtp_response', 'subject', 'to'],
    'a message without tags has no tags field')
  assert.equal(d.message_id, msg.id)
  assert.equal(d.to, 'alice@dest.example')
  assert.deepEqual(d.metadata, { order: '42' })
  assert.match(String(d.smtp_response), /^250 /)
  assert.ok(!Number.isNaN(Date.parse(String(d.delivered_at))))
  assert.match(e!.id, /^evt_[0-9a-z]{26}$/)
})

test('tracking can be turned off: html goes out as written', async () => {
  const msg = queuedMessage(org, { to: ['plain@dest.example'], track_opens: false, track_clicks: false, html: '<p><a href="https://example.org/x">x</a></p>' })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  await events.until(() => events.of(msg.id, 'delivered').length === 1)
  const body = sink.to('plain@dest.example')[0]!.raw.toString('utf8')
  assert.doesNotMatch(body, /\/t\/[oc]\//)
  assert.match(body, /https:\/\/example\.org\/x/)
})
