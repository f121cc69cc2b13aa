import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { putWebhook, publishEvent } from '../../helpers/webhooks.ts'
import { eventually } from '../../helpers/waiting.ts'

/**
 * Every private, loopback, link-local, multicast and broadcast form of a webhook target, in every spelling a URL
 * parser accepts, is refused when the webhook is created, and refused again at delivery when the record got
 * into the store some other way. A host name is checked at delivery, after resolution.
 */
let ob: TestOutbox
let rx: HttpsReceiver
let dns: DnsServer
let org: TestOrg
before(async () => {
  rx = await HttpsReceiver.start()
  dns = await DnsServer.start({ A: { 'loopback.test': ['127.0.0.1'], 'metadata.test': ['169.254.169.254'], 'private.test': ['10.1.2.3'] } })
  ob = await TestOutbox.start({ env: { OB_WEBHOOK_CA_FILE: testCa().caFile, OB_WEBHOOK_RETRY_SCHEDULE: '1', OB_DNS_SERVERS: dns.address } })
  org = await ob.org()
})
after(async () => { await ob.close(); await rx.close(); await dns.close() })

const literalTargets = (port: number): string[] => [
  '10.0.0.1', '10.255.255.254', '172.16.0.1', '172.31.255.254', '192.168.1.1', '100.64.0.1', '100.127.255.254',
  `127.0.0.1:${port}`, `127.1.2.3:${port}`, '169.254.169.254', '0.0.0.0', '224.0.0.1', '239.255.255.250', '255.255.255.255',
  `[::1]:${port}`, '[fe80::1]', '[fc00::1]', '[fd12:3456::1]', `[::ffff:127.0.0.1]:${port}`, `[::ffff:7f00:1]:${port}`,
  `[0:0:0:0:0:0:0:1]:${port}`, '[::]', '[::ffff:10.0.0.1]', '[::ffff:169.254.169.254]',
  `2130706433:${port}`, `0x7f000001:${port}`, `0177.0.0.1:${port}`, `127.1:${port}`, `0x7f.1:${port}`, '017700000001',
  `localhost:${port}`, `localhost.:${port}`, `LOCALHOST:${port}`, `api.localhost:${port}`
]

test('every private target is refused at creation with 400 on url', async () => {
  for (const host of literalTargets(rx.port)) {
    const url = `https://${host}/hook`
    const res = await ob.request('POST', '/v1/webhooks', { key: org.adminKey, body: { url, events: ['delivered'] } })
    assert.equal(res.status, 400, `${url}: ${res.status} ${res.text}`)
    assert.equal(res.body.error.errors[0].field, 'url', url)
  }
})

test('at delivery every private target and every name resolving to one is refused before connecting', async () => {
  const hosts = [...literalTargets(rx.port), `loopback.test:${rx.port}`, 'metadata.test', 'private.test']
  const hooks = await Promise.all(hosts.map(async (host) => ({ host, wh: await putWebhook(ob, org, { url: `https://${host}/hook`, events: ['delivered'] }) })))
  await publishEvent(ob, org, 'delivered')
  for (const { host, wh } of hooks) {
    const firstAttempt = async (): Promise<any> =>
      (await ob.request('GET', `/v1/webhooks/${wh.id}/deliveries`, { key: org.adminKey })).body.data.find((d: any) => d.attempt === 1)
    await eventually(async () => (await firstAttempt()) !== undefined, `${host}: first attempt logged`)
    const d = await firstAttempt()
    assert.equal(d.error, 'ssrf_blocked', `${host}: ${JSON.stringify(d)}`)
    assert.equal(d.status_code, null, host)
  }
  assert.equal(rx.requests.length, 0, 'nothing reached the receiver on loopback')
})
