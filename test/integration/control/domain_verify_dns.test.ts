import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { eventually } from '../../helpers/waiting.ts'

let ob: TestOutbox
let dns: DnsServer
let org: TestOrg
before(async () => {
  dns = await DnsServer.start({ TXT: {} })
  ob = await TestOutbox.start({ env: { OB_DOMAIN_VERIFICATION: 'dns', OB_DNS_SERVERS: dns.address, OB_MX_HOST: 'mx.outbox.test' } })
  org = await ob.org()
})
after(async () => {
  await ob.close()
  await dns.close()
})

interface Rec { type: string, name: string, value: string, status?: string, verified?: boolean }

async function addDomain (name: string): Promise<{ id: string, records: Rec[] }> {
  const r = await ob.request('POST', '/v1/domains', { key: org.adminKey, body: { name } })
  assert.equal(r.status, 201)
  return r.body
}

const statusOf = (records: Rec[], pick: (r: Rec) => boolean): string | undefined => records.find(pick)?.status
const isSpf = (r: Rec): boolean => r.value.startsWith('v=spf1') && !r.name.startsWith('bounces.')
const isReturnPathSpf = (r: Rec): boolean => r.type === 'TXT' && r.value.startsWith('v=spf1') && r.name.startsWith('bounces.')
const isDkim = (r: Rec): boolean => r.value.startsWith('v=DKIM1')

test('with nothing published the domain stays pending and every record is missing', async () => {
  const d = await addDomain(`none${process.pid}.example.net`)
  const r = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.equal(r.status, 200)
  assert.equal(r.body.status, 'pending')
  assert.equal(r.body.records.length, 6)
  assert.ok(r.body.records.every((x: Rec) => x.status === 'missing'))
})

test('DKIM alone is not enough, nor DKIM and the domain\'s SPF; with the return-path SPF the domain verifies', async () => {
  const name = `both${process.pid}.example.net`
  const d = await addDomain(name)
  const dkim = d.records.find(isDkim)!
  const spf = d.records.find(isSpf)!
  const returnPathSpf = d.records.find(isReturnPathSpf)!
  assert.equal(returnPathSpf.name, `bounces.${name}`)
  assert.equal(returnPathSpf.value, spf.value)
  // Long DKIM values travel as several 255-byte strings; the check joins them.
  dns.table.TXT![dkim.name] = [dkim.value]
  const half = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.equal(half.status, 200)
  assert.equal(half.body.status, 'pending')
  assert.equal(statusOf(half.body.records, isDkim), 'verified')
  assert.equal(statusOf(half.body.records, isSpf), 'missing')
  // The owner merges our mechanism into the SPF record they already had.
  const mechanism = spf.value.split(' ')[1]!
  dns.table.TXT![name] = ['google-site-verification=abc', `v=spf1 include:_spf.example.com ${mechanism} -all`]
  const noReturnPath = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.equal(noReturnPath.body.status, 'pending')
  assert.equal(statusOf(noReturnPath.body.records, isSpf), 'verified')
  assert.equal(statusOf(noReturnPath.body.records, isReturnPathSpf), 'missing')
  // An SPF record at the return-path domain without our mechanism does not count.
  dns.table.TXT![returnPathSpf.name] = ['v=spf1 include:_spf.example.com -all']
  assert.equal((await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })).body.status, 'pending')
  dns.table.TXT![returnPathSpf.name] = [returnPathSpf.value]
  const full = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.equal(full.body.status, 'verified')
  assert.equal(statusOf(full.body.records, isSpf), 'verified')
  assert.equal(statusOf(full.body.records, isReturnPathSpf), 'verified')
  assert.equal(statusOf(full.body.records, isDkim), 'verified')
  assert.equal(statusOf(full.body.records, (x) => x.type === 'MX'), 'missing')
  assert.equal((await ob.request('GET', `/v1/domains/${d.id}`, { key: org.adminKey })).body.status, 'verified')
})

test('a DKIM record with another key does not count', async () => {
  const d = await addDomain(`wrong${process.pid}.example.net`)
  const dkim = d.records.find(isDkim)!
  const spf = d.records.find(isSpf)!
  dns.table.TXT![dkim.name] = ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAsomethingelse']
  dns.table.TXT![spf.name] = [spf.value]
  const r = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.equal(r.body.status, 'pending')
  assert.equal(statusOf(r.body.records, isDkim), 'missing')
})

test('MX and DMARC are reported when published', async () => {
  const name = `all${process.pid}.example.net`
  const d = await addDomain(name)
  for (const rec of d.records) {
    if (rec.type === 'TXT') dns.table.TXT![rec.name] = [rec.value]
  }
  const mx = d.records.find((x) => x.type === 'MX')!
  assert.equal(mx.value, '10 mx.outbox.test', 'the MX record names OB_MX_HOST')
  const [priority, exchange] = mx.value.split(' ')
  dns.table.MX = { [mx.name]: [{ priority: Number(priority), exchange: exchange! }] }
  const r = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.equal(r.body.status, 'verified')
  assert.ok(r.body.records.every((x: Rec) => x.status === 'verified'), JSON.stringify(r.body.records))
})

test('each record keeps the result of the last check: the domain\'s listing shows which records are published', async () => {
  const name = `part${process.pid}.example.net`
  const d = await addDomain(name)
  const dkim = d.records.find(isDkim)!
  dns.table.TXT![dkim.name] = [dkim.value]
  const checked = await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })
  assert.equal(checked.body.status, 'pending')
  for (const shown of [checked.body, (await ob.request('GET', `/v1/domains/${d.id}`, { key: org.adminKey })).body]) {
    const verified = shown.records.filter((x: Rec & { verified: boolean }) => x.verified).map((x: Rec) => x.name)
    assert.deepEqual(verified, [dkim.name])
  }
  const listed = (await ob.request('GET', '/v1/domains', { key: org.adminKey })).body.data.find((x: { id: string }) => x.id === d.id)
  assert.equal(listed.records.find(isDkim).verified, true)
  assert.equal(listed.records.find(isSpf).verified, false)
})

test('a domain stored before the return-path SPF record existed is asked for it, and verifies only with it', async () => {
  const name = `older${process.pid}.example.net`
  const d = await addDomain(name)
  const key = `${org.orgId}.${d.id}`
  const stored = ob.proc.cp.domains.get(key)!
  await ob.proc.cp.domains.put(key, { ...stored, records: stored.records.filter((r) => !isReturnPathSpf(r)) })
  await eventually(() => ob.proc.cp.domains.get(key)?.records.length === 4, 'the stored record without the return-path SPF')
  const listed = await ob.request('GET', `/v1/domains/${d.id}`, { key: org.adminKey })
  const returnPathSpf = (listed.body.records as Rec[]).find(isReturnPathSpf)
  assert.deepEqual(returnPathSpf, { type: 'TXT', name: `bounces.${name}`, value: d.records.find(isSpf)!.value, verified: false })
  for (const rec of d.records) if (rec.type === 'TXT' && !isReturnPathSpf(rec)) dns.table.TXT![rec.name] = [rec.value]
  assert.equal((await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })).body.status, 'pending')
  dns.table.TXT![returnPathSpf!.name] = [returnPathSpf!.value]
  assert.equal((await ob.request('POST', `/v1/domains/${d.id}/verify`, { key: org.adminKey })).body.status, 'verified')
})
