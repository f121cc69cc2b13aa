import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { TestOrg } from '../../helpers/outbox.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute, rejectedCode } from '../../helpers/inbound.ts'
import { ReportScenario, arf, dsn } from '../../helpers/reports.ts'
import { newId } from '../../../protocol/mod.ts'
import { suppressionKey } from '../../../stores/control_plane/mod.ts'

let s: ReportScenario
let org: TestOrg
let events: EventReader

before(async () => {
  s = await ReportScenario.start()
  org = await s.ob.org()
  events = await EventReader.open(s.ob.proc.nc, org.orgId)
})
after(async () => {
  events.close()
  await s.close()
})

test('a DSN with a 5.x.x status to the VERP address is a hard bounce and suppresses the recipient', async () => {
  const rcpt = 'Gone.User@remote.test'
  const sent = await s.send(org, rcpt, ['billing'])
  await s.deliver(sent.returnPath, dsn({
    to: sent.returnPath, recipient: rcpt, status: '5.1.1', diagnostic: '550 5.1.1 <gone.user@remote.test>: user unknown',
    originalId: sent.id, domain: org.domain
  }))
  const [e] = await events.waitFor('bounced')
  const d = e!.data as any
  assert.equal(e!.message_id, sent.id)
  assert.equal(d.message_id, sent.id)
  assert.deepEqual(d.tags, ['billing'], 'a bounce report carries the message\'s tags')
  assert.equal(e!.domain, org.domain, 'and its record the sending domain, for webhook filters')
  assert.equal(d.to, 'gone.user@remote.test')
  assert.equal(d.bounce_type, 'hard')
  assert.equal(d.bounce_code, '550')
  assert.match(d.bounce_message, /user unknown/)
  assert.ok(!Number.isNaN(Date.parse(d.bounced_at)))
  const sup = s.ob.proc.cp.suppressions.get(suppressionKey(org.orgId, rcpt))
  assert.equal(sup?.reason, 'hard_bounce')
  assert.equal(sup?.message_id, sent.id)
})

test('a DSN with a 4.x.x status is a soft bounce and suppresses nothing', async () => {
  const rcpt = 'over.quota@remote.test'
  const sent = await s.send(org, rcpt)
  await s.deliver(sent.returnPath, dsn({
    to: sent.returnPath, recipient: rcpt, status: '4.2.2', diagnostic: '452 4.2.2 mailbox full', originalId: sent.id, domain: org.domain
  }))
  const all = await events.waitFor('bounced', 2)
  const d = all.find((e) => e.message_id === sent.id)!.data as any
  assert.equal(d.bounce_type, 'soft')
  assert.equal(d.bounce_code, '452')
  assert.equal(s.ob.proc.cp.isSuppressed(org.orgId, rcpt), false)
})

test('an ARF report to the VERP address is a complaint and suppresses the recipient', async () => {
  const rcpt = 'annoyed@remote.test'
  const sent = await s.send(org, rcpt, ['billing'])
  await s.deliver(sent.returnPath, arf({ to: sent.returnPath, recipient: rcpt, originalId: sent.id, domain: org.domain }))
  const [e] = await events.waitFor('complained')
  const d = e!.data as any
  assert.deepEqual({ message_id: d.message_id, to: d.to, feedback_type: d.feedback_type, tags: d.tags },
    { message_id: sent.id, to: rcpt, feedback_type: 'abuse', tags: ['billing'] })
  assert.equal(e!.domain, org.domain)
  assert.ok(!Number.isNaN(Date.parse(d.complained_at)))
  assert.equal(s.ob.proc.cp.suppressions.get(suppressionKey(org.orgId, rcpt))?.reason, 'complaint')
})

test('an ARF report to a routed feedback address names the message by its Message-ID header', async () => {
  await addRoute(s.ob, org, `fbl@${org.domain}`, false)
  const rcpt = 'reporter@remote.test'
  const sent = await s.send(org, rcpt)
  await s.deliver(`fbl@${org.domain}`, arf({ to: `fbl@${org.domain}`, recipient: rcpt, originalId: sent.id, domain: org.domain }))
  const all = await events.waitFor('complained', 2)
  const e = all.find((x) => x.message_id === sent.id)
  assert.ok(e !== undefined)
  assert.equal((e.data as any).to, rcpt)
  assert.equal(s.ob.proc.cp.isSuppressed(org.orgId, rcpt), true)
})

test('bounce addresses of a domain that is not registered here, and the old unkeyed form, are refused', async () => {
  const sent = await s.send(org, 'kept@remote.test')
  const otherDomain = sent.returnPath.replace(/@bounces\..*$/, '@bounces.not-ours.test')
  assert.equal(await rejectedCode(s.deliver(otherDomain, 'Subject: x\r\n\r\nx\r\n')), 550)
  const unkeyed = `bounces+${newId('msg')}-0123456789ab@bounces.${org.domain}`
  assert.equal(await rejectedCode(s.deliver(unkeyed, 'Subject: x\r\n\r\nx\r\n')), 550)
})
