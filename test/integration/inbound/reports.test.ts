import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Transporter } from 'nodemailer'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { inboundClient, addRoute, rejectedCode } from '../../helpers/inbound.ts'
import { encodeVerp, newId, suppressionKey } from '../../../engine/protocol/mod.ts'

let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let events: EventReader
let smtp: Transporter

before(async () => {
  dns = await DnsServer.start({})
  ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } })
  org = await ob.org()
  events = await EventReader.open(ob.proc.nc, org.orgId)
  smtp = inboundClient(ob)
})
after(async () => {
  smtp.close()
  events.close()
  await ob.close()
  await dns.close()
})

/** A delivery status notification as a receiving MTA writes it (RFC 3464). */
function dsn (to: string, recipient: string, status: string, diagnostic: string, originalId: string): string {
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.remote.test>', `To: ${to}`, 'Subject: Undelivered Mail Returned to Sender',
    'MIME-Version: 1.0', 'Content-Type: multipart/report; report-type=delivery-status; boundary="=_b"', '',
    '--=_b', 'Content-Type: text/plain; charset=us-ascii', '', 'Your message could not be delivered.', '',
    '--=_b', 'Content-Type: message/delivery-status', '',
    'Reporting-MTA: dns; mx.remote.test', 'Arrival-Date: Sun, 22 Nov 2026 03:00:00 +0000', '',
    `Final-Recipient: rfc822; ${recipient}`, 'Action: failed', `Status: ${status}`,
    `Diagnostic-Code: smtp; ${diagnostic}`, '',
    '--=_b', 'Content-Type: text/rfc822-headers', '',
    `From: news@${org.domain}`, `To: ${recipient}`, `Message-ID: <${originalId}@${org.domain}>`, 'Subject: Hello', '',
    '--=_b--', ''
  ].join('\r\n')
}

/** An abuse report in the Abuse Reporting Format (RFC 5965). */
function arf (to: string, recipient: string, originalId: string): string {
  return [
    'From: feedback@isp.test', `To: ${to}`, 'Subject: FW: Hello', 'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=feedback-report; boundary="=_f"', '',
    '--=_f', 'Content-Type: text/plain', '', 'This is an email abuse report.', '',
    '--=_f', 'Content-Type: message/feedback-report', '',
    'Feedback-Type: abuse', 'User-Agent: ISP-FBL/1.0', 'Version: 1', `Original-Rcpt-To: ${recipient}`, '',
    '--=_f', 'Content-Type: message/rfc822', '',
    `From: news@${org.domain}`, `To: ${recipient}`, `Message-ID: <${originalId}@${org.domain}>`, 'Subject: Hello', '', 'Hi there', '',
    '--=_f--', ''
  ].join('\r\n')
}

async function deliver (to: string, raw: string): Promise<void> {
  await smtp.sendMail({ envelope: { from: '', to: [to] }, raw })
}

test('a DSN with a 5.x.x status to the VERP address is a hard bounce and suppresses the recipient', async () => {
  const msgId = newId('msg')
  const rcpt = 'Gone.User@remote.test'
  const verp = encodeVerp(msgId, rcpt, org.domain)
  await deliver(verp, dsn(verp, rcpt, '5.1.1', '550 5.1.1 <gone.user@remote.test>: user unknown', msgId))
  const [e] = await events.waitFor('bounced')
  const d = e!.data as any
  assert.equal(e!.message_id, msgId)
  assert.equal(d.message_id, msgId)
  assert.equal(d.to, 'gone.user@remote.test')
  assert.equal(d.bounce_type, 'hard')
  assert.equal(d.bounce_code, '550')
  assert.match(d.bounce_message, /user unknown/)
  assert.ok(!Number.isNaN(Date.parse(d.bounced_at)))
  const s = ob.proc.cp.suppressions.get(suppressionKey(org.orgId, rcpt))
  assert.equal(s?.reason, 'hard_bounce')
  assert.equal(s?.message_id, msgId)
})

test('a DSN with a 4.x.x status is a soft bounce and suppresses nothing', async () => {
  const msgId = newId('msg')
  const rcpt = 'full@remote.test'
  const verp = encodeVerp(msgId, rcpt, org.domain)
  await deliver(verp, dsn(verp, rcpt, '4.2.2', '452 4.2.2 mailbox full', msgId))
  const all = await events.waitFor('bounced', 2)
  const d = all.find((e) => e.message_id === msgId)!.data as any
  assert.equal(d.bounce_type, 'soft')
  assert.equal(d.bounce_code, '452')
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, rcpt), false)
})

test('a DSN whose recipient does not match the VERP hash is dropped', async () => {
  const msgId = newId('msg')
  const verp = encodeVerp(msgId, 'real@remote.test', org.domain)
  await deliver(verp, dsn(verp, 'someone-else@remote.test', '5.1.1', '550 5.1.1 unknown', msgId))
  await events.settle(800)
  assert.equal(events.of('bounced').filter((e) => e.message_id === msgId).length, 0)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, 'someone-else@remote.test'), false)
})

test('an ARF report to the VERP address is a complaint and suppresses the recipient', async () => {
  const msgId = newId('msg')
  const rcpt = 'annoyed@remote.test'
  const verp = encodeVerp(msgId, rcpt, org.domain)
  await deliver(verp, arf(verp, rcpt, msgId))
  const [e] = await events.waitFor('complained')
  const d = e!.data as any
  assert.deepEqual({ message_id: d.message_id, to: d.to, feedback_type: d.feedback_type }, { message_id: msgId, to: rcpt, feedback_type: 'abuse' })
  assert.ok(!Number.isNaN(Date.parse(d.complained_at)))
  assert.equal(ob.proc.cp.suppressions.get(suppressionKey(org.orgId, rcpt))?.reason, 'complaint')
})

test('an ARF report to a routed feedback address names the message by its Message-ID header', async () => {
  await addRoute(ob, org, `fbl@${org.domain}`, false)
  const msgId = newId('msg')
  const rcpt = 'reporter@remote.test'
  await deliver(`fbl@${org.domain}`, arf(`fbl@${org.domain}`, rcpt, msgId))
  const all = await events.waitFor('complained', 2)
  const e = all.find((x) => x.message_id === msgId)
  assert.ok(e !== undefined)
  assert.equal((e.data as any).to, rcpt)
  assert.equal(ob.proc.cp.isSuppressed(org.orgId, rcpt), true)
})

test('bounce addresses of a domain that is not registered here are refused', async () => {
  const verp = encodeVerp(newId('msg'), 'a@remote.test', 'not-ours.test')
  assert.equal(await rejectedCode(deliver(verp, 'Subject: x\r\n\r\nx\r\n')), 550)
})
