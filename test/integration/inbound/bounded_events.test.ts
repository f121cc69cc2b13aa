import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { jetstreamManager } from '@nats-io/jetstream'
import type { Transporter } from 'nodemailer'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { inboundClient, addRoute } from '../../helpers/inbound.ts'
import { STREAM_EVENTS, type EventRecord } from '../../../protocol/mod.ts'

// Mail from anyone to a routed address must cost the event stream and the read model a bounded size per message,
// however large the mail: past OB_INBOUND_EVENT_MAX_BYTES (64 KB) the event carries excerpts and a reference.

const EVENT_MAX = 64 * 1024
const N = 96 * 1024
const MAILS = 6
/** OB_API_LIST_MAX_BYTES for this file: room for three of the events above on a page. */
const LIST_MAX = 256 * 1024

let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let other: TestOrg
let events: EventReader
let smtp: Transporter

before(async () => {
  dns = await DnsServer.start({})
  ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address, OB_API_LIST_MAX_BYTES: String(LIST_MAX) } })
  org = await ob.org()
  other = await ob.org()
  events = await EventReader.open(ob.proc.nc, org.orgId)
  smtp = inboundClient(ob)
  await addRoute(ob, org, `support@${org.domain}`, true)
})
after(async () => {
  smtp.close()
  events.close()
  await ob.close()
  await dns.close()
})

/** A plain-text message of about `bytes` bytes, `marker` in its subject. */
function mail (bytes: number, marker: string, line = 'y'.repeat(76)): string {
  const body = (line + '\r\n').repeat(Math.ceil(bytes / (line.length + 2)))
  return `From: stranger@sender.test\r\nTo: support@${org.domain}\r\nSubject: ${marker}\r\nContent-Type: text/plain\r\n\r\n${body}`
}

async function redisUsedMemory (): Promise<number> {
  const info = await ob.proc.redis.info('memory')
  return Number(/used_memory:(\d+)/.exec(info)![1])
}

async function eventsBytes (): Promise<number> {
  const jsm = await jetstreamManager(ob.proc.nc)
  return (await jsm.streams.info(STREAM_EVENTS)).state.bytes
}

/** Waits until the read model lists `count` inbound.received events of the organisation. */
async function listed (count: number): Promise<void> {
  for (;;) {
    let seen = 0
    let cursor = ''
    for (;;) {
      const r = await ob.request('GET', `/v1/events?type=inbound.received&limit=100${cursor}`, { key: org.adminKey })
      assert.equal(r.status, 200)
      seen += r.body.data.length
      if (!r.body.has_more) break
      cursor = `&cursor=${r.body.next_cursor}`
    }
    if (seen >= count) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Sends `MAILS` messages of `bytes`; what OB_EVENTS and Redis grew by once all are in the read model. */
async function growth (bytes: number): Promise<{ events: number, redis: number, received: EventRecord[] }> {
  const before = events.of('inbound.received').length
  const [e0, r0] = [await eventsBytes(), await redisUsedMemory()]
  for (let i = 0; i < MAILS; i++) {
    await smtp.sendMail({
      envelope: { from: 'stranger@sender.test', to: [`support@${org.domain}`] }, raw: mail(bytes, `size ${bytes} #${i}`)
    })
  }
  const received = (await events.waitFor('inbound.received', before + MAILS, 60_000)).slice(before)
  await listed(before + MAILS)
  return { events: await eventsBytes() - e0, redis: await redisUsedMemory() - r0, received }
}

test('events of mail of size n and 8n cost OB_EVENTS and Redis about the same, past the event size limit', async (t) => {
  const small = await growth(N)
  const large = await growth(8 * N)
  const eventsRatio = large.events / small.events
  const redisRatio = large.redis / small.redis
  t.diagnostic(`OB_EVENTS growth ${small.events} -> ${large.events} bytes (x${eventsRatio.toFixed(2)}); ` +
    `Redis used_memory ${small.redis} -> ${large.redis} bytes (x${redisRatio.toFixed(2)})`)
  assert.ok(eventsRatio < 1.5, `OB_EVENTS grows with the mail: x${eventsRatio.toFixed(2)} for 8 times the size`)
  assert.ok(redisRatio < 2, `Redis grows with the mail: x${redisRatio.toFixed(2)} for 8 times the size`)
  assert.ok(large.events / MAILS < EVENT_MAX + 8 * 1024, `an event stays within the limit (${large.events / MAILS} bytes each)`)
  for (const e of [...small.received, ...large.received]) {
    const d = e.data as Record<string, any>
    assert.ok(Buffer.byteLength(JSON.stringify(d)) <= EVENT_MAX, 'data is at most OB_INBOUND_EVENT_MAX_BYTES')
    assert.equal(d.truncated, true)
    assert.ok(d.text.length > 32 * 1024, 'the excerpt is the beginning of the text, most of the budget')
    assert.ok(d.text.startsWith('y'.repeat(76)))
    assert.deepEqual(d.raw, { url: `/v1/inbound/messages/${d.message_id}/raw`, size: d.raw.size })
  }
})

test('the whole message is read by its organisation at raw.url; another organisation gets 404', async () => {
  const big = events.of('inbound.received').map((e) => e.data as Record<string, any>).filter((d) => d.raw !== undefined)
  assert.ok(big.length >= 2)
  for (const d of [big[0]!, big.at(-1)!]) {
    const own = await ob.request('GET', d.raw.url, { key: org.adminKey })
    assert.equal(own.status, 200)
    assert.equal(own.headers.get('content-type'), 'message/rfc822')
    assert.equal(Buffer.byteLength(own.text), d.raw.size)
    assert.ok(own.text.includes(`Subject: ${d.subject as string}`))
    const foreign = await ob.request('GET', d.raw.url, { key: other.adminKey })
    assert.equal(foreign.status, 404)
    assert.equal(foreign.body.error.code, 'not_found')
  }
})

test('a message small enough to travel inside its job is kept too when its event is cut; one sent whole is not readable', async () => {
  const before = events.of('inbound.received').length
  // 40 KB of quotes: 80 KB once escaped in JSON, so the event is cut though the mail travels with its job.
  await smtp.sendMail({
    envelope: { from: 'stranger@sender.test', to: [`support@${org.domain}`] }, raw: mail(40 * 1024, 'quotes', '"'.repeat(76))
  })
  await smtp.sendMail({ envelope: { from: 'stranger@sender.test', to: [`support@${org.domain}`] }, raw: mail(2 * 1024, 'whole') })
  const [quoted, whole] = (await events.waitFor('inbound.received', before + 2)).slice(before).map((e) => e.data as Record<string, any>)
  assert.equal(quoted!.truncated, true)
  const own = await ob.request('GET', quoted!.raw.url, { key: org.adminKey })
  assert.equal(own.status, 200)
  assert.equal(Buffer.byteLength(own.text), quoted!.raw.size)
  assert.equal(whole!.raw, undefined)
  assert.equal(whole!.truncated, undefined)
  const notKept = await ob.request('GET', `/v1/inbound/messages/${whole!.message_id as string}/raw`, { key: org.adminKey })
  assert.equal(notKept.status, 404)
})

test('a list response stays within OB_API_LIST_MAX_BYTES: the page stops early and its cursor continues', async () => {
  const all = events.events.map((e) => e.id)
  assert.ok(all.length * 40 * 1024 > 2 * LIST_MAX, 'the events take several pages worth of bytes')
  const seen: string[] = []
  let cursor = ''
  let pages = 0
  for (;;) {
    const r = await ob.request('GET', `/v1/events?limit=100${cursor}`, { key: org.adminKey })
    assert.equal(r.status, 200)
    pages++
    assert.ok(Buffer.byteLength(r.text) <= LIST_MAX, `page ${pages} is ${Buffer.byteLength(r.text)} bytes`)
    assert.ok(r.body.data.length > 0)
    seen.push(...r.body.data.map((e: { id: string }) => e.id))
    if (!r.body.has_more) break
    cursor = `&cursor=${r.body.next_cursor as string}`
  }
  assert.ok(pages >= 3, `${pages} pages`)
  assert.equal(new Set(seen).size, seen.length, 'no event twice')
  assert.deepEqual(new Set(seen), new Set(all), 'every event once')
})
