import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { inboundClient, addRoute, rejectedCode } from '../../helpers/inbound.ts'
import { RawSmtp } from '../../helpers/raw_smtp.ts'
import type { Transporter } from 'nodemailer'
import { Objm } from '@nats-io/obj'
import { OBJ_INBOUND_RAW } from '../../../protocol/mod.ts'

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

test('mail to an exact route becomes one inbound.received event with the documented fields', async () => {
  const route = await addRoute(ob, org, `support@${org.domain}`, false)
  const info = await smtp.sendMail({
    from: 'Alice Sender <alice@sender.test>',
    to: `Support <SUPPORT@${org.domain.toUpperCase()}>`,
    subject: 'Help with my order',
    text: 'Hello, my order has not arrived.',
    html: '<p>Hello, my order <b>has not</b> arrived.</p>',
    headers: { 'X-Custom': 'yes' }
  })
  assert.match(info.response ?? '', /^250 .*queued as msg_[0-9a-z]{26}/)
  const [e] = await events.waitFor('inbound.received')
  const d = e!.data as Record<string, any>
  assert.equal(e!.org_id, org.orgId)
  assert.match(d.message_id, /^msg_[0-9a-z]{26}$/)
  assert.ok((info.response ?? '').includes(d.message_id), 'the 250 reply names the message id')
  assert.equal(d.route_id, route.id)
  assert.equal(d.from, '"Alice Sender" <alice@sender.test>')
  assert.deepEqual(d.to, [`support@${org.domain}`])
  assert.equal(d.subject, 'Help with my order')
  assert.equal(d.text.trim(), 'Hello, my order has not arrived.')
  assert.match(d.html, /<b>has not<\/b>/)
  assert.equal(d.headers['x-custom'], 'yes')
  assert.equal(d.headers.subject, 'Help with my order')
  for (const k of ['spf', 'dkim', 'dmarc']) {
    assert.ok(['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror'].includes(d.authentication[k]), k)
  }
  assert.equal(d.authentication.dkim, 'none')
  assert.equal(typeof d.spam_score, 'number')
  assert.ok(d.spam_score >= 0 && d.spam_score <= 10)
  assert.deepEqual(d.attachments, [])
  assert.ok(!Number.isNaN(Date.parse(d.received_at)))
})

test('attachments are listed; content (base64) only when the route includes attachments', async () => {
  const withContent = await addRoute(ob, org, `files@${org.domain}`, true)
  const withoutContent = await addRoute(ob, org, `*@${org.domain}`, false)
  const pdf = Buffer.from('%PDF-1.4 test document')
  await smtp.sendMail({
    from: 'bob@sender.test',
    to: [`files@${org.domain}`, `anyone@${org.domain}`],
    subject: 'Two routes',
    text: 'see attached',
    attachments: [{ filename: 'report.pdf', content: pdf, contentType: 'application/pdf' }]
  })
  const received = await events.waitFor('inbound.received', 3)
  const byRoute = new Map(received.slice(1).map((e) => [(e.data as any).route_id, e.data as any]))
  const full = byRoute.get(withContent.id)
  const bare = byRoute.get(withoutContent.id)
  assert.ok(full !== undefined && bare !== undefined, 'one event per matching route')
  assert.deepEqual(full.to, [`files@${org.domain}`], 'the exact route gets its own address only')
  assert.deepEqual(bare.to, [`anyone@${org.domain}`])
  assert.equal(full.message_id, bare.message_id)
  assert.deepEqual(full.attachments,
    [{ filename: 'report.pdf', content_type: 'application/pdf', size: pdf.length, content: pdf.toString('base64') }])
  assert.deepEqual(bare.attachments, [{ filename: 'report.pdf', content_type: 'application/pdf', size: pdf.length }])
})

test('an unrouted mailbox of another domain, and relay tricks, are refused with 5xx and produce nothing', async () => {
  const before = events.of('inbound.received').length
  assert.equal((await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: `other-${org.domain}` } })).status, 201)
  await addRoute(ob, org, `only@other-${org.domain}`, false)
  const send = (to: string): Promise<unknown> =>
    smtp.sendMail({ envelope: { from: 'x@sender.test', to: [to] }, raw: 'Subject: x\r\n\r\nx\r\n' })
  assert.equal(await rejectedCode(send(`nobody@other-${org.domain}`)), 550, 'known domain, no route for the mailbox')
  assert.equal(await rejectedCode(send('victim@elsewhere.test')), 550, 'a domain we do not serve: no open relay')
  assert.equal(await rejectedCode(send(`victim%elsewhere.test@${org.domain}`)), 550, 'percent hack')
  assert.equal(await rejectedCode(send(`elsewhere.test!victim@${org.domain}`)), 550, 'bang path')
  await events.settle()
  assert.equal(events.of('inbound.received').length, before)
})

test('a message larger than one object-store chunk is streamed to the store; its event has an excerpt, the API the whole', async () => {
  const before = events.of('inbound.received').length
  const line = 'y'.repeat(76) + '\r\n'
  const text = line.repeat(Math.ceil(300 * 1024 / line.length))
  await smtp.sendMail({
    envelope: { from: 'x@sender.test', to: [`support@${org.domain}`] }, raw: `Subject: large\r\nContent-Type: text/plain\r\n\r\n${text}`
  })
  const received = await events.waitFor('inbound.received', before + 1)
  const data = received[before]!.data as { subject: string, text: string, truncated?: true, raw: { url: string, size: number } }
  assert.equal(data.subject, 'large')
  assert.equal(data.truncated, true)
  assert.ok(data.text.startsWith('y'.repeat(76)) && data.text.length > 32 * 1024, 'the beginning of the text')
  const whole = await ob.request('GET', data.raw.url, { key: org.adminKey })
  assert.equal(whole.status, 200)
  assert.ok(whole.text.includes(text), 'the whole message, as received')
})

test('a message over 25 MB is refused with 552 and nothing is stored or emitted', async () => {
  const before = events.of('inbound.received').length
  const big = 'x'.repeat(76) + '\r\n'
  const body = big.repeat(Math.ceil((25 * 1024 * 1024 + 1024) / big.length))
  const code = await rejectedCode(smtp.sendMail({
    envelope: { from: 'x@sender.test', to: [`support@${org.domain}`] }, raw: `Subject: big\r\n\r\n${body}`
  }))
  assert.equal(code, 552)
  await events.settle()
  assert.equal(events.of('inbound.received').length, before)
  // Processed messages are deleted unless their event points at them (the 300 KB one above), and the oversized
  // one was never kept.
  const raw = await new Objm(ob.proc.nc).open(OBJ_INBOUND_RAW)
  const kept = events.of('inbound.received').map((e) => e.data as { message_id: string, raw?: unknown }).filter((d) => d.raw !== undefined)
  assert.deepEqual((await raw.list()).map((o) => o.name).sort(), kept.map((d) => d.message_id).sort())
})

test('past 100 recipients in one transaction the rest get 452 (try again), the first 100 are delivered', async () => {
  const before = events.of('inbound.received').length
  const to = Array.from({ length: 101 }, (_, i) => `many${i}@${org.domain}`)
  const info = await smtp.sendMail({ envelope: { from: 'x@sender.test', to }, raw: 'Subject: many\r\n\r\nhello all\r\n' })
  assert.equal(info.accepted?.length, 100)
  assert.deepEqual(info.rejected, [`many100@${org.domain}`])
  const all = await events.waitFor('inbound.received', before + 1)
  assert.equal((all[before]!.data as any).to.length, 100)
})

test('malformed mail (no headers, binary junk, broken MIME) is still delivered with what could be read', async () => {
  const before = events.of('inbound.received').length
  const junk = 'no header line here\r\n\u0001\u0002\u00ff binary \r\nContent-Type: multipart/mixed; boundary="x"\r\n\r\n--x\r\nbroken'
  await smtp.sendMail({ envelope: { from: '', to: [`junk@${org.domain}`] }, raw: junk })
  const all = await events.waitFor('inbound.received', before + 1)
  const d = all[before]!.data as any
  assert.deepEqual(d.to, [`junk@${org.domain}`])
  assert.equal(typeof d.subject, 'string')
  assert.equal(d.from, '')
  assert.ok(['none', 'neutral', 'temperror', 'permerror', 'fail', 'softfail', 'pass'].includes(d.authentication.spf))
})

test('a source route cannot relay: the route part is ignored (RFC 5321) and the address must still be ours', async () => {
  const s = await RawSmtp.open(ob.proc.inbound!.port)
  assert.match(await s.command('EHLO client.test'), /^250/)
  assert.match(await s.command('MAIL FROM:<x@sender.test>'), /^250/)
  assert.match(await s.command('RCPT TO:<@relay.test:victim@elsewhere.test>'), /^550 /)
  assert.match(await s.command('RCPT TO:<@a.test,@b.test:victim%elsewhere.test@' + org.domain + '>'), /^550 /)
  assert.match(await s.command(`RCPT TO:<@relay.test:support@${org.domain}>`), /^250 /)
  assert.match(await s.command('RSET'), /^250/)
  await s.command('QUIT')
  s.close()
})
