import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { inboundClient, addRoute } from '../../helpers/inbound.ts'
import { CONSUMER_INBOUND, STREAM_INBOUND } from '../../../protocol/mod.ts'
import type { Transporter } from 'nodemailer'

/**
 * The inbound consumer's first ack wait is 1 s, and a message's SPF, DKIM and DMARC look-ups can take longer than that
 * when the sender's name servers are slow (each look-up may wait up to 3 s). A message being processed reports
 * progress, so the server does not hand it out again meanwhile: each message is delivered to the consumer once.
 */
const MAILS = 80
const DNS_DELAY_MS = 1500

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

test('mail whose authentication look-ups outlast the ack wait is processed once, not handed out again', { timeout: 60_000 }, async (t) => {
  await addRoute(ob, org, `support@${org.domain}`, false)
  dns.delayMs = DNS_DELAY_MS
  const started = Date.now()
  for (let i = 0; i < MAILS; i++) {
    await smtp.sendMail({ from: `alice${i}@slow-dns.test`, to: `support@${org.domain}`, subject: `Slow ${i}`, text: 'Hello' })
  }
  await events.waitFor('inbound.received', MAILS, 45_000)
  const tookMs = Date.now() - started
  const info = await (await jetstreamManager(ob.proc.nc)).consumers.info(STREAM_INBOUND, CONSUMER_INBOUND)
  t.diagnostic(`${MAILS} mails processed in ${tookMs} ms; deliveries to the consumer ${info.delivered.consumer_seq}, ` +
    `redelivered now ${info.num_redelivered}`)
  assert.ok(tookMs > 1000, 'the look-ups took longer than the first ack wait')
  assert.equal(info.delivered.consumer_seq, MAILS, 'each job delivered to the consumer once')
  await events.settle(500)
  assert.equal(events.of('inbound.received').length, MAILS)
})
