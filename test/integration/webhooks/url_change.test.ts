import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { jetstreamManager } from '@nats-io/jetstream'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa, type ReceivedRequest } from '../../helpers/https_receiver.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { publishEvent } from '../../helpers/webhooks.ts'
import { eventually } from '../../helpers/waiting.ts'
import { verifySignature } from '../../../webhooks/sign.ts'
import { CONSUMER_WEBHOOK_FANOUT, STREAM_EVENTS } from '../../../protocol/mod.ts'

/**
 * PATCH url: what was queued for the old URL goes to the new one, signed with the same secret, and the security log
 * names the hosts (never the paths). One slot per endpoint, held at the old URL, so that work waits for it while
 * the URL changes: in the endpoint's queue in memory or parked in the job stream, whichever the engine chose.
 */
let rx: HttpsReceiver
let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
const logs: string[] = []
before(async () => {
  rx = await HttpsReceiver.start()
  dns = await DnsServer.start({ A: { 'receiver.test': ['127.0.0.1'] } })
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(String(chunk)); cb() } })
  ob = await TestOutbox.start({
    log: { level: 'info', stream },
    env: {
      OB_WEBHOOK_CA_FILE: testCa().caFile,
      OB_WEBHOOK_ALLOW_PRIVATE: 'true',
      OB_DNS_SERVERS: dns.address,
      OB_WEBHOOK_RETRY_SCHEDULE: '1,1,1',
      OB_WEBHOOK_ENDPOINT_CONCURRENCY: '1'
    }
  })
  org = await ob.org()
})
after(async () => { await ob.close(); await rx.close(); await dns.close() })

const eventOf = (r: ReceivedRequest): string => (JSON.parse(r.rawBody.toString('utf8')) as { id: string }).id

test('after PATCH url, a retry and an attempt queued for the old URL go to the new one, with the same secret', async () => {
  let release!: () => void
  const held = new Promise<void>((resolve) => { release = resolve })
  // The old URL holds its first request, then answers 500: its event is retried, after the change.
  rx.script = (r) => r.path === '/old' ? { status: 500, until: held } : { status: 200 }
  const created = await ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: rx.url('/old'), events: ['delivered'] }
  })
  assert.equal(created.status, 201, created.text)
  const { id, secret } = created.body as { id: string, secret: string }
  const first = await publishEvent(ob, org, 'delivered')
  await rx.waitFor(1, { path: '/old' })
  const second = await publishEvent(ob, org, 'delivered')
  // The second event is taken by the fan-out: its attempt waits for the old URL's one slot.
  const jsm = await jetstreamManager(ob.proc.nc)
  await eventually(async () => (await jsm.consumers.info(STREAM_EVENTS, CONSUMER_WEBHOOK_FANOUT)).num_pending === 0,
    'the fan-out has taken both events')

  const newUrl = `https://receiver.test:${rx.port}/new?token=receiver-secret`
  const patched = await ob.request('PATCH', `/v1/webhooks/${id}`, { key: org.adminKey, body: { url: newUrl } })
  assert.equal(patched.status, 200, patched.text)
  assert.equal(patched.body.url, newUrl)
  assert.equal(patched.body.secret, undefined)
  release()

  const path = '/new?token=receiver-secret'
  await eventually(() => new Set(rx.on(path).map(eventOf)).size === 2, 'both events at the new URL')
  assert.deepEqual(new Set(rx.on(path).map(eventOf)), new Set([first.id, second.id]))
  for (const r of rx.on(path)) {
    assert.equal(verifySignature(r.rawBody, r.headers['x-service-signature'] as string, secret).ok, true, 'the secret is unchanged')
    assert.equal(r.headers.host, `receiver.test:${rx.port}`)
  }
  assert.deepEqual(rx.on('/old').map(eventOf), [first.id], 'the old URL got only the attempt made before the change')
  const log = async (): Promise<Array<[string, number, number | null]>> =>
    (await ob.request('GET', `/v1/webhooks/${id}/deliveries`, { key: org.adminKey })).body.data
      .map((d: { event_id: string, attempt: number, status_code: number | null }) => [d.event_id, d.attempt, d.status_code])
  await eventually(async () => (await log()).length === 3, 'three attempts logged')
  assert.deepEqual((await log()).map(String).sort(), [[first.id, 1, 500], [first.id, 2, 200], [second.id, 1, 200]].map(String).sort())

  const line = await eventually(() => logs.flatMap((l) => l.split('\n')).filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.kind === 'security' && l.event === 'webhook.updated' && l.webhook_id === id), 'the security log line')
  assert.equal(line.host, `receiver.test:${rx.port}`)
  assert.equal(line.previous_host, `127.0.0.1:${rx.port}`)
  assert.ok(!logs.join('').includes('receiver-secret'), 'no path or query of a URL in the log')
})
