import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Resolver } from 'node:dns/promises'
import { authenticate } from 'mailauth'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { eventually } from '../../helpers/waiting.ts'
import { SPF_CHANGED_WARNING } from '../../../gateway/control/domains.ts'

// An installation whose mail leaves from an egress source bound to 127.0.0.2 (not the address of the API), with
// domain verification by DNS through the local DNS server: the SPF records a domain is told to publish name that
// source, and mail sent through the API passes SPF at a receiver that checks as mailauth does.
let ob: TestOutbox
let dns: DnsServer
let sink: SmtpSink
let org: TestOrg

interface Rec { type: string, name: string, value: string, verified: boolean, warning?: string, status?: string }

before(async () => {
  sink = await SmtpSink.start()
  dns = await DnsServer.start({
    MX: { 'dest.example': [{ exchange: 'mx.dest.example', priority: 10 }] }, A: { 'mx.dest.example': ['127.0.0.1'] }, TXT: {}
  })
  ob = await TestOutbox.start({
    env: {
      OB_DOMAIN_VERIFICATION: 'dns', OB_DNS_SERVERS: dns.address, OB_MX_HOST: 'mx.outbox.test', OB_SMTP_OUTBOUND_PORT: String(sink.port),
      OB_SMTP_ALLOW_PRIVATE: 'true', OB_DELIVERY_RETRY_SCHEDULE: '1'
    }
  })
  // Created before the installation had a source: its records named the host of OB_PUBLIC_URL, and it is verified.
  org = await ob.org()
})
after(async () => {
  await ob.close()
  await sink.close()
  await dns.close()
})

const spfRecords = (records: Rec[]): Rec[] => records.filter((r) => r.type === 'TXT' && r.value.startsWith('v=spf1'))

test('a domain created before the source existed named the public host; with no source, nothing changes', async () => {
  const r = await ob.request('GET', `/v1/domains/${org.domainId}`, { key: org.adminKey })
  assert.equal(r.status, 200)
  const spf = spfRecords(r.body.records)
  assert.deepEqual(spf.map((x) => [x.name, x.value, x.verified, x.warning]), [
    [org.domain, 'v=spf1 ip4:127.0.0.1 ~all', true, undefined],
    [`bounces.${org.domain}`, 'v=spf1 ip4:127.0.0.1 ~all', true, undefined]
  ])
})

test('once mail leaves from a source, a verified domain lists the corrected SPF, stays verified and warns until it is published; ' +
  'mail from the source then passes SPF', async () => {
  await ob.proc.cp.egress.addSource({ name: 'mta2', address: '127.0.0.2', ehlo: 'mta2.outbox.test' })
  await ob.proc.cp.egress.putPool('default', [{ source: 'mta2' }])
  const listed = await eventually(async () => {
    const r = await ob.request('GET', `/v1/domains/${org.domainId}`, { key: org.adminKey })
    return spfRecords(r.body.records)[0]?.value === 'v=spf1 ip4:127.0.0.2 ~all' ? r.body : undefined
  }, 'the SPF records to name the source')
  assert.equal(listed.status, 'verified', 'the domain stays verified')
  for (const r of spfRecords(listed.records)) {
    assert.equal(r.value, 'v=spf1 ip4:127.0.0.2 ~all', `${r.name}: the default pool has a source, so the public host is not named`)
    assert.equal(r.verified, false)
    assert.equal(r.warning, SPF_CHANGED_WARNING)
  }
  // A record merging the new mechanism with others counts; one missing it does not.
  dns.table.TXT![org.domain] = ['v=spf1 include:_spf.example.com ip4:127.0.0.2 -all']
  dns.table.TXT![`bounces.${org.domain}`] = ['v=spf1 ip4:127.0.0.1 ~all']
  const half = await ob.request('POST', `/v1/domains/${org.domainId}/verify`, { key: org.adminKey })
  assert.equal(half.status, 200)
  assert.equal(half.body.status, 'verified')
  const [own, returnPath] = spfRecords(half.body.records)
  assert.deepEqual([own?.status, own?.warning], ['verified', undefined])
  assert.deepEqual([returnPath?.status, returnPath?.warning], ['missing', SPF_CHANGED_WARNING])

  dns.table.TXT![`bounces.${org.domain}`] = [returnPath!.value]
  const full = await ob.request('POST', `/v1/domains/${org.domainId}/verify`, { key: org.adminKey })
  assert.ok(spfRecords(full.body.records).every((r) => r.status === 'verified' && r.warning === undefined))
  const after = await ob.request('GET', `/v1/domains/${org.domainId}`, { key: org.adminKey })
  assert.ok(spfRecords(after.body.records).every((r) => r.verified && r.warning === undefined), 'no warning once published')

  const sent = await ob.request('POST', '/v1/messages/send', {
    key: org.adminKey, body: { from: `news@${org.domain}`, to: 'reader@dest.example', subject: 'SPF', text: 'hello', track_opens: false }
  })
  assert.equal(sent.status, 202, sent.text)
  const mail = await eventually(() => sink.to('reader@dest.example')[0], 'the message at the sink')
  assert.equal(mail.remoteAddress, '127.0.0.2', 'the mail left from the source, not from the address of the API')
  assert.match(mail.mailFrom, new RegExp(`@bounces\\.${org.domain.replace(/\./g, '\\.')}$`))

  const resolver = new Resolver({ timeout: 2000, tries: 2 })
  resolver.setServers([dns.address])
  const check = async (ip: string): Promise<string> => {
    const result = await authenticate(mail.raw, {
      ip, helo: mail.ehlo, sender: mail.mailFrom, mta: 'mx.dest.example',
      resolver: async (name: string, rr: string) => await resolver.resolve(name, rr)
    } as Parameters<typeof authenticate>[1])
    assert.ok(result.spf !== false)
    return result.spf.status.result
  }
  assert.equal(await check(mail.remoteAddress), 'pass')
  assert.equal(await check('127.0.0.1'), 'softfail', 'the address of the API is no longer named')
  // with the record found before still published, the new source fails SPF: why the record carries a warning
  const published = dns.table.TXT![`bounces.${org.domain}`]!
  dns.table.TXT![`bounces.${org.domain}`] = ['v=spf1 ip4:127.0.0.1 ~all']
  await new Promise((resolve) => setTimeout(resolve, 50))
  assert.equal(await check(mail.remoteAddress), 'softfail')
  dns.table.TXT![`bounces.${org.domain}`] = published
})
