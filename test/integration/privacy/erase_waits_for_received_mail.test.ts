// test-group: long-wait — the waiting message is processed at its next retry, up to a minute after its chunk lands
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { TestOutbox } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { addRoute } from '../../helpers/inbound.ts'
import { eventually } from '../../helpers/waiting.ts'
import { OBJ_INBOUND_RAW, STREAM_INBOUND, encodeJob, inboundSubject, newId, type InboundJob } from '../../../protocol/mod.ts'
import { rawToken } from '../../../inbound/raw_store.ts'

// One Outbox with its inbound processing. A received message naming Frank waits in OB_INBOUND: its job is there,
// its one-chunk message not yet (as when the chunk lands a moment after its job), so it is tried again and again.
// Then a backlog of such jobs, too long for the erase to search.
let dns: DnsServer
let ob: TestOutbox

before(async () => {
  dns = await DnsServer.start({})
  ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } })
})
after(async () => {
  await ob.close()
  await dns.close()
})

async function erase (key: string, email: string): Promise<{ status: number, body: any, text: string, retryAfter: string | null }> {
  const res = await ob.request('POST', '/v1/privacy/erase', { key, body: { email } })
  return { status: res.status, body: res.body, text: res.text, retryAfter: res.headers.get('retry-after') }
}

test('an erase waits for received mail naming the address still waiting to be processed: 409, then erased once processed', async () => {
  const org = await ob.org()
  await addRoute(ob, org, `*@${org.domain}`, false)
  const events = await EventReader.open(ob.proc.nc, org.orgId)
  const other = await ob.org()
  const frank = 'frank.waiting@far.example'
  try {
    // Its time of reception, ahead of now, keeps the job from being taken as processed and dropped meanwhile (a
    // job whose chunk is missing 30 s after reception is one processed already); it comes back 1, 5, 30 and 60 s later.
    const id = newId('msg')
    const data = Buffer.from(`From: Frank <${frank}>\r\nTo: hello@${org.domain}\r\nSubject: waiting\r\n\r\nstill here\r\n`)
    const token = rawToken(id)
    const sha256 = createHash('sha256').update(data).digest('base64url')
    const job: InboundJob = {
      id,
      received_at: new Date(Date.now() + 3600_000).toISOString(),
      mail_from: frank,
      rcpt_to: [`hello@${org.domain}`],
      remote_ip: '127.0.0.1',
      helo: 'far.example',
      size: data.length,
      raw: { token, sha256 }
    }
    const js = jetstream(ob.proc.nc)
    await js.publish(inboundSubject(0), encodeJob(job), { msgID: id })

    const refused = await erase(org.adminKey, 'FRANK.waiting@far.example')
    assert.equal(refused.status, 409, refused.text)
    assert.equal(refused.body.error.code, 'conflict')
    assert.deepEqual(refused.body.error.details.inbound_message_ids, [id])
    assert.equal(refused.retryAfter, '5')
    assert.equal(refused.body.error.retry_after, 5)

    const elsewhere = await erase(other.adminKey, frank)
    assert.equal(elsewhere.status, 200, `mail received at another organisation's domain is not its concern: ${elsewhere.text}`)

    // the chunk lands; the next attempt processes the message into an event naming Frank
    await js.publish(`$O.${OBJ_INBOUND_RAW}.C.${token}`, data)
    await events.waitFor('inbound.received', 1, 180_000)
    const erased = await eventually(async () => {
      const r = await erase(org.adminKey, frank)
      return r.status === 200 ? r : undefined
    }, 'the erase once the message is processed', 180_000, 1000)
    assert.ok(erased.body.removed.stored_events >= 1, erased.text)
    assert.equal(erased.body.removed.inbound_raw, 0, 'the message fit its event and was not kept')
  } finally {
    events.close()
  }
})

test('behind a backlog of more than 1,000 received messages the erase reads none of them and waits: 409 with their number', async () => {
  const org = await ob.org()
  const js = jetstream(ob.proc.nc)
  // jobs of other mail whose chunks never land: they wait (and come back) until they are purged below
  for (let batch = 0; batch < 11; batch++) {
    await Promise.all(Array.from({ length: 100 }, async () => {
      const id = newId('msg')
      const job: InboundJob = {
        id,
        received_at: new Date(Date.now() + 3600_000).toISOString(),
        mail_from: 'someone@far.example',
        rcpt_to: ['someone@elsewhere.example'],
        remote_ip: '127.0.0.1',
        helo: 'far.example',
        size: 10,
        raw: { token: rawToken(id), sha256: '' }
      }
      await js.publish(inboundSubject(0), encodeJob(job), { msgID: id })
    }))
  }
  const jsm = await jetstreamManager(ob.proc.nc)
  try {
    const refused = await erase(org.adminKey, 'grace@far.example')
    assert.equal(refused.status, 409, refused.text)
    assert.ok(refused.body.error.details.inbound_waiting > 1000, refused.text)
    assert.equal(refused.body.error.details.inbound_message_ids, undefined)
    assert.equal(refused.retryAfter, '5')
  } finally {
    await jsm.streams.purge(STREAM_INBOUND)
  }
  const erased = await eventually(async () => {
    const r = await erase(org.adminKey, 'grace@far.example')
    return r.status === 200 ? r : undefined
  }, 'the erase once the backlog is gone', 60_000, 1000)
  assert.equal(erased.body.removed.messages, 0)
})
