import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { gunzipSync } from 'node:zlib'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { EventWatcher, publishQueued, queuedMessage } from '../../helpers/engine_env.ts'
import { HttpsReceiver } from '../../helpers/https_receiver.ts'
import { issueCert, selfSignedCert } from '../../helpers/test_certs.ts'
import { MtaStsServer, stsEngineEnv, stsPolicy } from '../../helpers/mta_sts_server.ts'

/**
 * MTA-STS `testing` only reports, and TLS-RPT (docs/delivery.md, "TLS reports"): the sessions with each policy
 * domain are counted per UTC day, and a finished day's report goes, gzipped JSON in RFC 8460's shape, to the
 * https: `rua` of the domain's `_smtp._tls` record, once per cluster.
 */
let trusted: SmtpSink
let untrusted: SmtpSink
let dns: DnsServer
let policies: MtaStsServer
let rua: HttpsReceiver
let ob: TestOutbox
let org: TestOrg
let events: EventWatcher

before(async () => {
  trusted = await SmtpSink.start({ tls: issueCert(['mx.rpt-good.test']) })
  untrusted = await SmtpSink.start({ host: '127.0.0.2', port: trusted.port, tls: selfSignedCert(['mx.rpt-testing.test']) })
  rua = await HttpsReceiver.start()
  policies = await MtaStsServer.start({
    'rpt-testing.test': stsPolicy('testing', ['mx.rpt-testing.test']),
    'rpt-good.test': stsPolicy('enforce', ['mx.rpt-good.test'])
  })
  dns = await DnsServer.start({
    MX: {
      'rpt-testing.test': [{ exchange: 'mx.rpt-testing.test', priority: 10 }],
      'rpt-good.test': [{ exchange: 'mx.rpt-good.test', priority: 10 }],
      'rpt-nopolicy.test': [{ exchange: 'mx.rpt-nopolicy.test', priority: 10 }]
    },
    A: {
      'mx.rpt-testing.test': ['127.0.0.2'], // self-signed: fails verification
      'mx.rpt-good.test': ['127.0.0.1'],
      'mta-sts.rpt-testing.test': ['127.0.0.1'],
      'mta-sts.rpt-good.test': ['127.0.0.1'],
      // publishes MTA-STS, but the policy server has no certificate for it: no policy can be had
      'mx.rpt-nopolicy.test': ['127.0.0.1'],
      'mta-sts.rpt-nopolicy.test': ['127.0.0.1']
    },
    TXT: {
      '_mta-sts.rpt-testing.test': ['v=STSv1; id=1'],
      '_mta-sts.rpt-good.test': ['v=STSv1; id=1'],
      '_smtp._tls.rpt-testing.test': [`v=TLSRPTv1; rua=mailto:tlsrpt@rpt-testing.test,${rua.url('/tlsrpt/testing')}`],
      '_smtp._tls.rpt-good.test': [`v=TLSRPTv1; rua=${rua.url('/tlsrpt/good')}`],
      '_mta-sts.rpt-nopolicy.test': ['v=STSv1; id=1'],
      '_smtp._tls.rpt-nopolicy.test': [`v=TLSRPTv1; rua=${rua.url('/tlsrpt/nopolicy')}`]
    }
  })
  ob = await TestOutbox.start({
    env: { ...stsEngineEnv(dns.address, trusted.port, policies), OB_PUBLIC_URL: 'https://outbox.example' }
  })
  org = await ob.org()
  events = await EventWatcher.start(ob.proc.nc, org.orgId)
})
after(async () => {
  events.stop()
  await ob.close()
  await trusted.close()
  await untrusted.close()
  await policies.close()
  await rua.close()
  await dns.close()
})

async function send (to: string): Promise<string> {
  const msg = queuedMessage(org, { to: [to] })
  await publishQueued(ob.proc.nc, ob.proc.config, msg)
  return msg.id
}

interface Report {
  'organization-name': string
  'date-range': { 'start-datetime': string, 'end-datetime': string }
  'contact-info': string
  'report-id': string
  policies: Array<{
    policy: { 'policy-type': string, 'policy-string': string[], 'policy-domain': string, 'mx-host': string[] }
    summary: { 'total-successful-session-count': number, 'total-failure-session-count': number }
    'failure-details'?: Array<Record<string, string | number>>
  }>
}

test('a testing policy only reports: a certificate that does not verify still gets the mail, and the failure is counted', async () => {
  const a = await send('user@rpt-testing.test')
  const b = await send('user@rpt-good.test')
  const c = await send('other@rpt-good.test')
  await events.until(() => [a, b, c].every((id) => events.of(id, 'delivered').length === 1))
  assert.equal(untrusted.to('user@rpt-testing.test').length, 1)
  assert.equal(events.of(a, 'deferred').length, 0)
})

test('a policy that cannot be fetched: delivered as without a policy, the failure counted', async () => {
  const id = await send('user@rpt-nopolicy.test')
  await events.until(() => events.of(id, 'delivered').length === 1)
  assert.equal(trusted.to('user@rpt-nopolicy.test').length, 1)
})

test('the day\'s TLS report goes to the https rua as gzipped JSON in RFC 8460\'s shape, once', async () => {
  await new Promise((resolve) => setTimeout(resolve, 1500)) // the threads flush their counters every second
  const day = new Date().toISOString().slice(0, 10)
  const tomorrow = Date.now() + 86_400_000
  const run = await ob.proc.engine!.sendTlsReports(tomorrow)
  assert.equal(run?.locked, true)
  const [good] = await rua.waitFor(1, { path: '/tlsrpt/good' })
  const [testing] = await rua.waitFor(1, { path: '/tlsrpt/testing' })
  const [nopolicy] = await rua.waitFor(1, { path: '/tlsrpt/nopolicy' })
  for (const r of [good!, testing!]) {
    assert.equal(r.method, 'POST')
    assert.equal(r.headers['content-type'], 'application/tlsrpt+gzip')
  }
  const g = JSON.parse(gunzipSync(good!.rawBody).toString()) as Report
  assert.equal(g['organization-name'], 'outbox.example')
  assert.deepEqual(g['date-range'], { 'start-datetime': `${day}T00:00:00Z`, 'end-datetime': `${day}T23:59:59Z` })
  assert.equal(g['contact-info'], 'postmaster@outbox.example')
  assert.equal(typeof g['report-id'], 'string')
  assert.deepEqual(g.policies[0]!.policy, {
    'policy-type': 'sts',
    'policy-string': ['version: STSv1', 'mode: enforce', 'mx: mx.rpt-good.test', 'max_age: 86400'],
    'policy-domain': 'rpt-good.test',
    'mx-host': ['mx.rpt-good.test']
  })
  assert.deepEqual(g.policies[0]!.summary, { 'total-successful-session-count': 2, 'total-failure-session-count': 0 })

  const t = JSON.parse(gunzipSync(testing!.rawBody).toString()) as Report
  assert.equal(t.policies[0]!.policy['policy-domain'], 'rpt-testing.test')
  assert.deepEqual(t.policies[0]!.summary, { 'total-successful-session-count': 0, 'total-failure-session-count': 1 })
  const detail = t.policies[0]!['failure-details']![0]!
  assert.equal(detail['result-type'], 'certificate-not-trusted')
  assert.equal(detail['receiving-mx-hostname'], 'mx.rpt-testing.test')
  assert.equal(detail['receiving-ip'], '127.0.0.2')
  assert.equal(detail['failed-session-count'], 1)

  const n = JSON.parse(gunzipSync(nopolicy!.rawBody).toString()) as Report
  assert.deepEqual(n.policies[0]!.policy, { 'policy-type': 'sts', 'policy-domain': 'rpt-nopolicy.test' })
  assert.deepEqual(n.policies[0]!.summary, { 'total-successful-session-count': 0, 'total-failure-session-count': 1 })
  assert.equal(n.policies[0]!['failure-details']![0]!['result-type'], 'sts-webpki-invalid')

  // the day's counters are kept 8 days
  const ttl = await ob.proc.redis.ttl(`ob:tlsrpt:{${day}}:d:rpt-good.test`)
  assert.ok(ttl > 7 * 86_400 && ttl <= 8 * 86_400, `ttl ${ttl}`)

  // a second run (another engine, or the next hour) sends nothing again
  const again = await ob.proc.engine!.sendTlsReports(tomorrow)
  assert.deepEqual(again?.sent, [])
  assert.equal(rua.on().length, 3)
})

test('today\'s counters are not reported before the day is over', async () => {
  const run = await ob.proc.engine!.sendTlsReports(Date.now())
  assert.deepEqual(run?.sent, [])
})
