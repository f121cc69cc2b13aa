import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventReader } from '../../helpers/events.ts'
import { eventually } from '../../helpers/waiting.ts'
import type { HealthChangedData } from '../../../protocol/mod.ts'
import { sampleEventData } from '../../../stores/webhooks/mod.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { ApiError } from '../../../protocol/mod.ts'
import { jetstream } from '@nats-io/jetstream'
import { pino } from 'pino'
import { DomainHealthService } from '../../../gateway/control/health_watch.ts'
import { HealthStore } from '../../../gateway/control/health_state.ts'

/**
 * The domain health check against a local DNS server: live answers (GET /v1/domains/{id}/health) and the periodic
 * round that reports a change for the worse as `domain.health_changed`, once.
 */

const INTERVAL_MS = 400
let ob: TestOutbox
let dns: DnsServer
let receiver: HttpsReceiver
let sourceCount = 0

interface Item { check: string, subject: string, status: string, message: string }
interface Rec { type: string, name: string, value: string }

before(async () => {
  dns = await DnsServer.start({ TXT: {}, A: {}, MX: {}, PTR: {} })
  receiver = await HttpsReceiver.start()
  ob = await TestOutbox.start({
    env: {
      OB_WEBHOOK_ALLOW_PRIVATE: 'true',
      OB_WEBHOOK_CA_FILE: testCa().caFile,
      OB_DNS_SERVERS: dns.address,
      OB_MX_HOST: 'mx.outbox.test',
      OB_DNSBL_ZONES: 'bl.outbox.test,clean.outbox.test',
      OB_DOMAIN_HEALTH_INTERVAL_MS: String(INTERVAL_MS)
    }
  })
})
after(async () => {
  await ob.close()
  await dns.close()
  await receiver.close()
})

/**
 * A new organisation whose mail leaves from its own source, with every record it is asked for published. The DNS
 * records are in place before the source is assigned, so no round sees a half-published state.
 */
async function healthyOrg (): Promise<{ org: TestOrg, address: string, records: Rec[] }> {
  const org = await ob.org()
  const n = ++sourceCount
  const address = `192.0.2.${10 + n}`
  const ehlo = `mta${n}.outbox.test`
  const view = await ob.request('GET', `/v1/domains/${org.domainId}`, { key: org.adminKey })
  const records = view.body.records as Rec[]
  dns.table.PTR![`${address.split('.').reverse().join('.')}.in-addr.arpa`] = [ehlo]
  dns.table.A![ehlo] = [address]
  for (const r of records) {
    if (r.type === 'TXT') {
      // SPF names this source and the installation's host; everything else exactly as asked
      const value = r.value.startsWith('v=spf1') ? r.value.replace('v=spf1 ', `v=spf1 ip4:${address} `) : r.value
      dns.table.TXT![r.name] = [value]
    } else if (r.type === 'MX') {
      dns.table.MX![r.name] = [{ priority: 10, exchange: r.value.split(' ')[1]! }]
    }
  }
  const cp = ob.proc.cp
  await cp.egress.addSource({ name: `src${n}`, address, ehlo })
  await cp.egress.putPool(`pool${n}`, [{ source: `src${n}` }])
  await cp.egress.assignOrg(org.orgId, `pool${n}`)
  return { org, address, records }
}

const dkimRecords = (records: Rec[]): Rec[] => records.filter((r) => r.value.startsWith('v=DKIM1'))
const itemOf = (items: Item[], check: string, subject?: string): Item | undefined =>
  items.find((i) => i.check === check && (subject === undefined || i.subject === subject))

test('the health check flags a missing DKIM record and a source listed on a blocklist, and passes the rest', async () => {
  const { org, address, records } = await healthyOrg()
  const [rsa, ed25519] = dkimRecords(records)
  assert.ok(rsa !== undefined && ed25519 !== undefined)
  delete dns.table.TXT![rsa.name]
  dns.table.A![`${address.split('.').reverse().join('.')}.bl.outbox.test`] = ['127.0.0.2']
  const r = await ob.request('GET', `/v1/domains/${org.domainId}/health`, { key: org.adminKey })
  assert.equal(r.status, 200, r.text)
  const items = r.body.items as Item[]
  assert.equal(r.body.domain_id, org.domainId)
  assert.equal(r.body.status, 'error')
  const dkim = itemOf(items, 'dkim', rsa.name)!
  assert.equal(dkim.status, 'error')
  assert.match(dkim.message, /missing/)
  assert.equal(itemOf(items, 'dkim', ed25519.name)?.status, 'ok')
  const listed = itemOf(items, 'blocklist', address)!
  assert.equal(listed.status, 'error')
  assert.match(listed.message, /bl\.outbox\.test \(127\.0\.0\.2\)/)
  // everything else is as it should be
  assert.equal(itemOf(items, 'spf', org.domain)?.status, 'ok', JSON.stringify(items))
  assert.equal(itemOf(items, 'return_path_spf', `bounces.${org.domain}`)?.status, 'ok')
  assert.equal(itemOf(items, 'return_path_mx', `bounces.${org.domain}`)?.status, 'ok')
  assert.equal(itemOf(items, 'dmarc')?.status, 'ok')
  assert.equal(itemOf(items, 'reverse_dns', address)?.status, 'ok')
  assert.equal(itemOf(items, 'mta_sts')?.status, 'ok')
  assert.equal(itemOf(items, 'tls_rpt')?.status, 'ok')
  assert.equal(itemOf(items, 'tracking_cname')?.status, 'not_checked')
  for (const i of items) assert.ok(['ok', 'warning', 'error', 'not_checked'].includes(i.status) && i.message.length > 0)
})

test('SPF that does not cover a source is an error naming it; a PTR naming another host is a warning', async () => {
  const { org, address } = await healthyOrg()
  dns.table.TXT![org.domain] = ['v=spf1 ip4:198.51.100.1 -all']
  dns.table.PTR![`${address.split('.').reverse().join('.')}.in-addr.arpa`] = ['elsewhere.outbox.test']
  const r = await ob.request('GET', `/v1/domains/${org.domainId}/health`, { key: org.adminKey })
  const spf = itemOf(r.body.items, 'spf', org.domain)!
  assert.equal(spf.status, 'error')
  assert.match(spf.message, new RegExp(`${address.replace(/\./g, '\\.')} \\(fail\\)`))
  const rdns = itemOf(r.body.items, 'reverse_dns', address)!
  assert.equal(rdns.status, 'warning')
  assert.match(rdns.message, /elsewhere\.outbox\.test/)
})

test('the sources of a broadcast stream\'s own pool are checked too, since the domain\'s mail on it leaves from them', async () => {
  const { org, address } = await healthyOrg()
  const n = ++sourceCount
  const streamAddress = `192.0.2.${10 + n}`
  const cp = ob.proc.cp
  await cp.egress.addSource({ name: `src${n}`, address: streamAddress, ehlo: `mta${n}.outbox.test` })
  await cp.egress.putPool(`pool${n}`, [{ source: `src${n}` }])
  await cp.streams.create(org.orgId, 'news', { name: 'Newsletter' })
  await cp.egress.assignStream(org.orgId, 'news', `pool${n}`)
  const r = await ob.request('GET', `/v1/domains/${org.domainId}/health`, { key: org.adminKey })
  assert.equal(r.status, 200, r.text)
  assert.ok(itemOf(r.body.items, 'reverse_dns', address) !== undefined, 'the organisation\'s pool')
  assert.ok(itemOf(r.body.items, 'reverse_dns', streamAddress) !== undefined, 'the stream\'s pool')
  assert.ok(itemOf(r.body.items, 'blocklist', streamAddress) !== undefined, 'the stream\'s pool')
})

test('another organisation\'s domain is refused and an unknown one is not found', async () => {
  const mine = await ob.org()
  const theirs = await ob.org()
  const other = await ob.request('GET', `/v1/domains/${theirs.domainId}/health`, { key: mine.adminKey })
  assert.equal(other.status, 403)
  assert.equal(other.body.error.code, 'forbidden')
  const unknown = await ob.request('GET', '/v1/domains/dom_00000000000000000000000000/health', { key: mine.adminKey })
  assert.equal(unknown.status, 404)
})

test('an answer is reused for a minute, and past 10 live checks a minute the organisation gets 429, from every gateway', async () => {
  // the count is per clock minute: start early in one
  if (new Date().getSeconds() > 45) await new Promise((resolve) => setTimeout(resolve, (61 - new Date().getSeconds()) * 1000))
  const org = await ob.org()
  const ids: string[] = []
  for (let i = 0; i < 12; i++) {
    const d = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: `rl${i}x${process.pid}.example.net` } })
    assert.equal(d.status, 201)
    ids.push(d.body.id)
  }
  const first = await ob.request('GET', `/v1/domains/${ids[0]}/health`, { key: org.adminKey })
  assert.equal(first.status, 200)
  const again = await ob.request('GET', `/v1/domains/${ids[0]}/health`, { key: org.adminKey })
  assert.equal(again.body.checked_at, first.body.checked_at)
  for (let i = 1; i < 10; i++) assert.equal((await ob.request('GET', `/v1/domains/${ids[i]}/health`, { key: org.adminKey })).status, 200)
  const over = await ob.request('GET', `/v1/domains/${ids[10]}/health`, { key: org.adminKey })
  assert.equal(over.status, 429)
  assert.equal(over.body.error.code, 'rate_limited')
  assert.ok(Number(over.headers.get('retry-after')) >= 1)
  // a cached answer is still given
  assert.equal((await ob.request('GET', `/v1/domains/${ids[0]}/health`, { key: org.adminKey })).status, 200)
  // another gateway counts against the same number
  const other = new DomainHealthService({
    config: ob.proc.config, cp: ob.proc.cp, redis: ob.proc.redis, js: jetstream(ob.proc.nc), log: pino({ level: 'silent' })
  })
  await assert.rejects(other.live(ob.proc.cp.domains.getBy('id', ids[11]!)!),
    (err: unknown) => err instanceof ApiError && err.code === 'rate_limited')
})

test('a webhook may subscribe to domain.health_changed', async () => {
  const org = await ob.org()
  const r = await ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: 'https://hooks.example.com/outbox', events: ['domain.health_changed'] }
  })
  assert.equal(r.status, 201, r.text)
  assert.deepEqual(r.body.events, ['domain.health_changed'])
})

test('the periodic check publishes domain.health_changed once when a record disappears, not on every round after', async () => {
  const { org, records } = await healthyOrg()
  const hook = await ob.request('POST', '/v1/webhooks', {
    key: org.adminKey, body: { url: receiver.url('/health-hook'), events: ['domain.health_changed'] }
  })
  assert.equal(hook.status, 201, hook.text)
  const events = await EventReader.open(ob.proc.nc, org.orgId)
  try {
    const state = async (): Promise<Record<string, string> | undefined> => {
      const raw = await ob.proc.redis.hget('ob:dh:state', org.domainId)
      return raw === null ? undefined : JSON.parse(raw)
    }
    // a first round sets the baseline: all ok, and no event
    const [rsa] = dkimRecords(records)
    await eventually(async () => (await state())?.[`dkim|${rsa!.name}`] === 'ok', 'a round that finds the DKIM record', 10_000)
    const published = dns.table.TXT![rsa!.name]!
    delete dns.table.TXT![rsa!.name]
    const [event] = await events.waitFor('domain.health_changed', 1, 10_000)
    const data = event!.data as unknown as HealthChangedData
    assert.equal(data.domain_id, org.domainId)
    assert.equal(data.domain, org.domain)
    assert.equal(data.status, 'error')
    assert.equal(data.previous_status, 'ok')
    assert.deepEqual(data.worsened.map((w) => [w.check, w.subject, w.status, w.previous_status]), [['dkim', rsa!.name, 'error', 'ok']])
    assert.equal(event!.message_id, undefined)
    assert.equal(event!.domain, org.domain, 'the record names the domain, for webhook domain filters')
    assert.ok(!('metadata' in data) && !('tags' in data) && !('message_id' in data))
    // the subscribed webhook receives it, as it was published
    const [request] = await receiver.waitFor(1, { path: '/health-hook', timeoutMs: 10_000 })
    const body = JSON.parse(request!.rawBody.toString()) as { id: string, type: string, data: unknown }
    assert.deepEqual(body,
      { id: event!.id, type: 'domain.health_changed', timestamp: event!.timestamp, environment: 'live', data: event!.data })
    // the rounds of the next 2 s (about five) see the same missing record: no new event
    await events.settle(5 * INTERVAL_MS)
    assert.equal(events.of('domain.health_changed').length, 1)
    // better is not an event; worse again is
    dns.table.TXT![rsa!.name] = published
    await eventually(async () => (await state())?.[`dkim|${rsa!.name}`] === 'ok', 'a round that finds it again', 10_000)
    assert.equal(events.of('domain.health_changed').length, 1)
    delete dns.table.TXT![rsa!.name]
    await events.waitFor('domain.health_changed', 2, 10_000)
  } finally {
    events.close()
  }
})

test('a webhook test event of type domain.health_changed carries sample data', async () => {
  const data = sampleEventData('domain.health_changed', Date.now()) as unknown as HealthChangedData & { test: boolean }
  assert.equal(data.test, true)
  assert.equal(data.worsened[0]?.check, 'dkim')
})

test('one process at a time holds the period\'s lease', async () => {
  const store = new HealthStore(ob.proc.redis)
  // the gateway's own lease lasts one period; take the next one, then no other holder gets it
  await eventually(async () => await store.takeLease('test-a', 2000), 'the lease free', 10_000)
  assert.equal(await store.takeLease('test-b', 2000), false)
})

test('the periodic check looks at verified domains only', async () => {
  const org = await ob.org()
  const pending = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name: `pending${process.pid}.example.net` } })
  assert.equal(pending.status, 201)
  await eventually(async () => await ob.proc.redis.hexists('ob:dh:state', org.domainId) === 1, 'a round over the verified domain', 10_000)
  await new Promise((resolve) => setTimeout(resolve, 3 * INTERVAL_MS))
  assert.equal(await ob.proc.redis.hexists('ob:dh:state', pending.body.id), 0)
})
