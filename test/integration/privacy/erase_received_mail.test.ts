import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import { Objm } from '@nats-io/obj'
import type { Transporter } from 'nodemailer'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { inboundClient, addRoute } from '../../helpers/inbound.ts'
import { eventually } from '../../helpers/waiting.ts'
import { OBJ_INBOUND_RAW } from '../../../protocol/mod.ts'

// One Outbox receiving mail on its inbound SMTP port. Erin writes to organisations' routes; messages over the
// event's size (OB_INBOUND_EVENT_MAX_BYTES, 64 KB) are kept whole in ob_inbound_raw for the organisations whose
// events point at them, until each of them erases her address.
let dns: DnsServer
let ob: TestOutbox
let smtp: Transporter

const ERIN = 'erin.sender@far.example'
const LINE = 'z'.repeat(76) + '\r\n'

before(async () => {
  dns = await DnsServer.start({})
  ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } })
  smtp = inboundClient(ob)
})
after(async () => {
  smtp.close()
  await ob.close()
  await dns.close()
})

/** An organisation with a catch-all route, and a reader of its events. */
async function receiver (): Promise<{ org: TestOrg, events: EventReader }> {
  const org = await ob.org()
  await addRoute(ob, org, `*@${org.domain}`, false)
  return { org, events: await EventReader.open(ob.proc.nc, org.orgId) }
}

/** Sends Erin's message of about `kb` KB to `to`; its event is cut to size, so it points at the message kept whole. */
async function sendFromErin (to: string[], kb: number, subject: string): Promise<string> {
  const text = LINE.repeat(Math.ceil(kb * 1024 / LINE.length))
  await smtp.sendMail({
    envelope: { from: ERIN, to },
    raw: `From: Erin Sender <${ERIN}>\r\nTo: ${to.join(', ')}\r\nSubject: ${subject}\r\nContent-Type: text/plain\r\n\r\n${text}`
  })
  return text
}

async function rawUrlOf (events: EventReader, subject: string): Promise<string> {
  const received = await eventually(() => events.of('inbound.received').find((e) => (e.data as { subject?: string }).subject === subject),
    `inbound.received "${subject}"`, 60_000)
  const raw = (received.data as { raw?: { url: string } }).raw
  assert.ok(raw !== undefined, 'the event was cut to size and points at the whole message')
  return raw.url
}

async function erase (org: TestOrg, email: string): Promise<{ status: number, body: any, text: string, retryAfter: string | null }> {
  const res = await ob.request('POST', '/v1/privacy/erase', { key: org.adminKey, body: { email } })
  return { status: res.status, body: res.body, text: res.text, retryAfter: res.headers.get('retry-after') }
}

/** The messages of the object store's stream (chunks and metadata) whose subject or bytes contain `needle`. */
async function objectStoreHolding (needle: string): Promise<string[]> {
  const jsm = await jetstreamManager(ob.proc.nc)
  const stream = `OBJ_${OBJ_INBOUND_RAW}`
  const { first_seq: first, last_seq: last } = (await jsm.streams.info(stream)).state
  const hits: string[] = []
  for (let seq = first; seq <= last && last > 0; seq++) {
    const m = await jsm.streams.getMessage(stream, { seq })
    if (m === null) continue
    if (`${m.subject}\n${Buffer.from(m.data).toString('latin1')}`.toLowerCase().includes(needle)) hits.push(`#${seq} ${m.subject}`)
  }
  return hits
}

test('an erase deletes the received message kept whole for the only organisation reading it', async () => {
  const { org, events } = await receiver()
  try {
    // about 100 KB: one object-store chunk, stored beside its job
    const text = await sendFromErin([`support@${org.domain}`], 100, 'only reader')
    const url = await rawUrlOf(events, 'only reader')
    const before = await ob.request('GET', url, { key: org.adminKey })
    assert.equal(before.status, 200)
    assert.ok(before.text.includes(text), 'the whole message, as received')

    const erased = await erase(org, 'Erin.Sender@FAR.example')
    assert.equal(erased.status, 200, erased.text)
    assert.equal(erased.body.removed.inbound_raw, 1, erased.text)
    assert.equal(erased.body.removed.inbound_raw_deleted, 1, erased.text)
    assert.ok(erased.body.removed.stored_events >= 1, erased.text)

    assert.equal((await ob.request('GET', url, { key: org.adminKey })).status, 404)
    const name = url.split('/')[4]!
    const info = await (await new Objm(ob.proc.nc).open(OBJ_INBOUND_RAW)).info(name)
    assert.ok(info === null || info.deleted, 'the message is deleted from the bucket')
    assert.deepEqual(await objectStoreHolding(ERIN), [], 'nothing of the address is left in the object store')

    const again = await erase(org, ERIN)
    assert.equal(again.status, 200, again.text)
    assert.equal(again.body.removed.inbound_raw, 0, 'running it again finds nothing more')
  } finally {
    events.close()
  }
})

test('a message two organisations received stays readable by the second after the first erase; the second erase deletes it', async () => {
  const b = await receiver()
  const c = await receiver()
  try {
    // about 300 KB: several chunks, streamed to the store
    const text = await sendFromErin([`info@${b.org.domain}`, `info@${c.org.domain}`], 300, 'two readers')
    const url = await rawUrlOf(b.events, 'two readers')
    assert.equal(await rawUrlOf(c.events, 'two readers'), url, 'both events point at the one kept message')
    for (const { org } of [b, c]) assert.equal((await ob.request('GET', url, { key: org.adminKey })).status, 200)

    const first = await erase(b.org, ERIN)
    assert.equal(first.status, 200, first.text)
    assert.equal(first.body.removed.inbound_raw, 1, first.text)
    assert.equal(first.body.removed.inbound_raw_deleted, 0, first.text)
    assert.equal((await ob.request('GET', url, { key: b.org.adminKey })).status, 404, 'the erasing organisation no longer reads it')
    const still = await ob.request('GET', url, { key: c.org.adminKey })
    assert.equal(still.status, 200, 'the other organisation still does')
    assert.ok(still.text.includes(text), 'whole')

    const second = await erase(c.org, ERIN)
    assert.equal(second.status, 200, second.text)
    assert.equal(second.body.removed.inbound_raw, 1, second.text)
    assert.equal(second.body.removed.inbound_raw_deleted, 1, second.text)
    assert.equal((await ob.request('GET', url, { key: c.org.adminKey })).status, 404)
    assert.deepEqual(await objectStoreHolding(ERIN), [], 'nothing of the address is left in the object store')
    assert.deepEqual(await objectStoreHolding(text.slice(0, 200)), [], 'nor of the message')
  } finally {
    b.events.close()
    c.events.close()
  }
})
