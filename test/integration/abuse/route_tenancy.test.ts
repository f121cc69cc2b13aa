import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Transporter } from 'nodemailer'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute, inboundClient, rejectedCode } from '../../helpers/inbound.ts'

/** An inbound route may match only a domain of the caller's organisation (a key without admin: its own domain). */
let dns: DnsServer
let ob: TestOutbox
let owner: TestOrg
let intruder: TestOrg
let ownerEvents: EventReader
let intruderEvents: EventReader
let smtp: Transporter

before(async () => {
  dns = await DnsServer.start({})
  ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } })
  owner = await ob.org()
  intruder = await ob.org()
  ownerEvents = await EventReader.open(ob.proc.nc, owner.orgId)
  intruderEvents = await EventReader.open(ob.proc.nc, intruder.orgId)
  smtp = inboundClient(ob)
})
after(async () => {
  smtp.close()
  ownerEvents.close()
  intruderEvents.close()
  await ob.close()
  await dns.close()
})

const add = async (key: string, match: string): Promise<{ status: number, body: any }> =>
  await ob.request('POST', '/v1/inbound/routes', { key, body: { match, action: { type: 'webhook', include_attachments: false } } })

test('a route for another organisation\'s domain, or for a domain nobody registered, is 403 and nothing is stored', async () => {
  for (const match of [`*@${owner.domain}`, `support@${owner.domain}`, `SUPPORT@${owner.domain.toUpperCase()}`, '*@nobody-registered.test',
    `x@sub.${intruder.domain}`]) {
    const r = await add(intruder.adminKey, match)
    assert.equal(r.status, 403, match)
    assert.equal(r.body.error.code, 'forbidden', match)
  }
  assert.equal((await ob.request('GET', '/v1/inbound/routes', { key: intruder.adminKey })).body.data.length, 0)
})

test('a key without admin may route only its own domain; an admin key any domain of its organisation', async () => {
  const second = await ob.request('POST', '/v1/domains', { key: intruder.adminKey, body: { name: `second-${intruder.domain}` } })
  assert.equal(second.status, 201, second.text)
  const manage = await ob.key(intruder, ['manage'])
  assert.equal((await add(manage, `help@${intruder.domain}`)).status, 201)
  const elsewhere = await add(manage, `help@second-${intruder.domain}`)
  assert.equal(elsewhere.status, 403)
  assert.equal(elsewhere.body.error.code, 'forbidden')
  assert.equal((await add(intruder.adminKey, `help@second-${intruder.domain}`)).status, 201)
})

test('a route on another organisation\'s domain that exists from before receives nothing of its mail', async () => {
  // Written straight to the control plane, as a route created before the rule would be.
  await addRoute(ob, intruder, `*@${owner.domain}`, false)
  await addRoute(ob, owner, `support@${owner.domain}`, false)
  const send = async (to: string): Promise<unknown> => await smtp.sendMail({
    envelope: { from: 'a@sender.test', to: [to] }, raw: `From: a@sender.test\r\nTo: ${to}\r\nSubject: private\r\n\r\nfor the owner only\r\n`
  })
  assert.equal(await rejectedCode(send(`anyone@${owner.domain}`)), 550, 'only the intruder\'s catch-all would match')
  await send(`support@${owner.domain}`)
  // the first inbound mail of the process starts its analysis thread: on a loaded machine that alone can take seconds
  const [got] = await ownerEvents.waitFor('inbound.received', 1, 30_000)
  assert.deepEqual((got!.data as { to: string[] }).to, [`support@${owner.domain}`])
  await intruderEvents.settle(500)
  assert.equal(intruderEvents.of('inbound.received').length, 0)
})
