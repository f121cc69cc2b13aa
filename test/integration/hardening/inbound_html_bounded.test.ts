import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Transporter } from 'nodemailer'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { inboundClient, addRoute } from '../../helpers/inbound.ts'
import { cpuMs, grewAboutLinearly, ADVERSARIAL_HTML } from '../../helpers/work.ts'
import { eventually } from '../../helpers/waiting.ts'

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
  await addRoute(ob, org, `*@${org.domain}`, false)
})
after(async () => {
  smtp.close()
  events.close()
  await ob.close()
  await dns.close()
})

let sent = 0
/** Sends an HTML-only message to the route and waits for its inbound.received event; answers the event's data. */
async function receive (html: string, subject = `m${++sent}`): Promise<Record<string, any>> {
  await smtp.sendMail({ from: 'sender@sender.test', to: `in@${org.domain}`, subject, html })
  return await receivedWith(subject)
}

async function receivedWith (subject: string): Promise<Record<string, any>> {
  const hit = await eventually(() => events.of('inbound.received').find((e) => (e.data as any).subject === subject),
    `inbound.received for ${subject}`, 120_000, 20)
  return hit.data as Record<string, any>
}

const N = 25_000

for (const [shape, make] of Object.entries(ADVERSARIAL_HTML)) {
  test(`inbound: the work for ${shape} HTML grows about linearly (n and 8n)`, async (t) => {
    await receive(make(100))
    const small = await cpuMs(async () => { await receive(make(N)) })
    const large = await cpuMs(async () => { await receive(make(8 * N)) })
    const figures = `${shape}: ${small.toFixed(0)} ms of CPU for n, ${large.toFixed(0)} ms for 8n`
    t.diagnostic(figures)
    assert.ok(grewAboutLinearly(small, large), figures)
  })
}

/**
 * The work done until an ordinary mail sent right behind `html` has reached its route (the wait for the mail in
 * front, if any, included); then the mail in front is waited for, outside the measure.
 */
async function workUntilMailBehind (html: string): Promise<number> {
  const tag = `behind${++sent}`
  const work = await cpuMs(async () => {
    await smtp.sendMail({ from: 'sender@sender.test', to: `in@${org.domain}`, subject: `${tag}-front`, html })
    await smtp.sendMail({ from: 'sender@sender.test', to: `in@${org.domain}`, subject: `${tag}-normal`, html: '<p>Hello</p>' })
    await receivedWith(`${tag}-normal`)
  }, 1)
  await receivedWith(`${tag}-front`)
  return work
}

test('a mail behind nested HTML waits no longer than behind ordinary HTML of the same size', async () => {
  const ordinary = '<p>Some words of an ordinary newsletter.</p>'.repeat(24_000) // about 1 MB, under the limits
  const nested = ADVERSARIAL_HTML.nested(200_000) // 1 MB
  await workUntilMailBehind('<p>warm up</p>')
  const behindOrdinary = await workUntilMailBehind(ordinary)
  const behindNested = await workUntilMailBehind(nested)
  assert.ok(behindNested < 3 * behindOrdinary,
    `${behindNested.toFixed(0)} ms of CPU behind nested HTML, ${behindOrdinary.toFixed(0)} ms behind ordinary HTML`)
})

test('nested HTML is delivered to the route flagged as not analysed, and the mail behind it is analysed as usual', async () => {
  const adversarial = smtp.sendMail({
    from: 'sender@sender.test', to: `in@${org.domain}`, subject: 'nested', html: ADVERSARIAL_HTML.nested(200_000)
  })
  await adversarial
  await smtp.sendMail({ from: 'sender@sender.test', to: `in@${org.domain}`, subject: 'normal', html: '<p>Hello <b>there</b></p>' })
  const [nested, normal] = await Promise.all([receivedWith('nested'), receivedWith('normal')])
  assert.equal(nested.content_analysis, 'skipped')
  assert.equal(nested.text, '', 'no text is derived from HTML past the limits')
  assert.equal(typeof nested.spam_score, 'number')
  assert.equal(normal.content_analysis, 'complete')
  assert.match(normal.text, /Hello THERE|Hello there/)
  // Each was analysed once: neither failed and came back as a retry.
  assert.equal(events.of('inbound.received').filter((e) => ['nested', 'normal'].includes((e.data as any).subject)).length, 2)
})
