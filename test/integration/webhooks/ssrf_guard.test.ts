import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { putWebhook, publishEvent, webhookNow } from '../../helpers/webhooks.ts'
import { eventually } from '../../helpers/waiting.ts'

// OB_WEBHOOK_ALLOW_PRIVATE is false here. The refused targets below are never connected to: the guard
// refuses them before any packet leaves, which is what the test proves.
let ob: TestOutbox
let rx: HttpsReceiver
let dns: DnsServer
let org: TestOrg
let key: string
before(async () => {
  rx = await HttpsReceiver.start()
  dns = await DnsServer.start({ A: { 'loopback.test': ['127.0.0.1'], 'receiver.test': ['127.0.0.1'] } })
  ob = await TestOutbox.start({ env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_RETRY_SCHEDULE: '1', OB_DNS_SERVERS: dns.address } })
  org = await ob.org()
  key = await ob.key(org, ['manage'])
})
after(async () => { await ob.close(); await rx.close(); await dns.close() })

const targets = (port: number): Record<string, string> => ({
  loopback: `https://127.0.0.1:${port}/a`,
  private10: 'https://10.0.0.1/hook',
  metadata: 'https://169.254.169.254/latest/meta-data',
  ipv6Loopback: `https://[::1]:${port}/b`,
  ipv4Mapped: `https://[::ffff:127.0.0.1]:${port}/c`,
  nameToLoopback: `https://loopback.test:${port}/d`
})

test('loopback, private, link-local, IPv6 loopback, IPv4-mapped and names resolving to loopback are refused', async () => {
  const hooks = await Promise.all(Object.entries(targets(rx.port)).map(async ([name, url]) => ({
    name, wh: await putWebhook(ob, org, { url, events: ['delivered'] })
  })))
  await publishEvent(ob, org, 'delivered')
  for (const { name, wh } of hooks) {
    await eventually(() => webhookNow(ob, wh)?.status === 'failed', `${name} refused on both attempts and failed`)
    // The delivery log is written in batches, so the failed status may be seen before the last entry.
    const attempts = async (): Promise<unknown[]> => (await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key })).body.data
      .map((d: any) => [d.attempt, d.status_code, d.error])
    await eventually(async () => (await attempts()).length === 2, `${name} has both attempts logged`)
    assert.deepEqual(await attempts(), [[2, null, 'ssrf_blocked'], [1, null, 'ssrf_blocked']], name)
  }
  assert.equal(rx.requests.length, 0, 'nothing reached the receiver')
})

test('with OB_WEBHOOK_ALLOW_PRIVATE=true a name is resolved by the configured DNS and connected to with its own TLS name', async () => {
  const open = await TestOutbox.start({
    env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_ALLOW_PRIVATE: 'true', OB_DNS_SERVERS: dns.address }
  })
  try {
    const openOrg = await open.org()
    const openKey = await open.key(openOrg, ['manage'])
    const wh = await putWebhook(open, openOrg, { url: `https://receiver.test:${rx.port}/named`, events: ['opened'] })
    await publishEvent(open, openOrg, 'opened')
    const [req] = await rx.waitFor(1, { path: '/named' })
    assert.equal(req!.headers.host, `receiver.test:${rx.port}`)
    await eventually(async () => (await open.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key: openKey })).body.data.length === 1,
      'attempt logged')
    const log = await open.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key: openKey })
    assert.equal(log.body.data[0].status_code, 200)
  } finally {
    await open.close()
  }
})

test('PATCH url refuses what creation refuses (400 naming url) and leaves the webhook as it was', async () => {
  const created = await ob.request('POST', '/v1/webhooks', { key, body: { url: 'https://hooks.example.com/outbox', events: ['delivered'] } })
  assert.equal(created.status, 201, created.text)
  const refused = [...Object.entries(targets(rx.port)).filter(([name]) => name !== 'nameToLoopback').map(([, url]) => url),
    'http://hooks.example.com/plain', 'https://user:pw@hooks.example.com/creds', `https://hooks.example.com/${'a'.repeat(2048)}`]
  for (const url of refused) {
    const r = await ob.request('PATCH', `/v1/webhooks/${created.body.id}`, { key, body: { url } })
    assert.equal(r.status, 400, url)
    assert.equal(r.body.error.code, 'validation_error')
    assert.equal(r.body.error.field, 'url', url)
  }
  const now = await ob.request('GET', `/v1/webhooks/${created.body.id}`, { key })
  assert.equal(now.body.url, 'https://hooks.example.com/outbox')
})
