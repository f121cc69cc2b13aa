import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { gunzipSync } from 'node:zlib'
import { simpleParser } from 'mailparser'
import { TestOutbox } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { countYesterday, dkimVerdict, reportSenderKey, tlsReportsCounted, type ReportSenderKey } from '../../helpers/tls_reports.ts'

/**
 * TLS reports to `mailto:` rua (docs/delivery.md, "TLS reports"): the report goes as RFC 8460 §5.3 mail, signed by
 * the installation's report sender (OB_REPORT_FROM), to the MX host of the address's domain. A 4xx has it mailed
 * again next run, once; a 5xx ends it.
 */
let sink: SmtpSink
let dns: DnsServer
let key: ReportSenderKey
let ob: TestOutbox

before(async () => {
  sink = await SmtpSink.start()
  key = reportSenderKey()
  dns = await DnsServer.start({
    MX: { 'reports.example': [{ exchange: 'mx.reports.example', priority: 10 }] },
    A: { 'mx.reports.example': ['127.0.0.1'] },
    TXT: {
      [`${key.selector}._domainkey.${key.domain}`]: [key.record],
      '_smtp._tls.mail-rpt.test': ['v=TLSRPTv1; rua=mailto:tlsrpt@reports.example'],
      '_smtp._tls.retry-rpt.test': ['v=TLSRPTv1; rua=mailto:tempfail-rpt@reports.example'],
      '_smtp._tls.refused-rpt.test': ['v=TLSRPTv1; rua=mailto:permfail-rpt@reports.example']
    }
  })
  ob = await TestOutbox.start({
    env: {
      OB_ROLE: 'engine',
      OB_PUBLIC_URL: 'https://outbox.example',
      OB_DNS_SERVERS: dns.address,
      OB_SMTP_ALLOW_PRIVATE: 'true',
      OB_SMTP_OUTBOUND_PORT: String(sink.port),
      ...key.env
    }
  })
  await countYesterday(ob.proc.redis, 'mail-rpt.test', 3, [
    { 'result-type': 'certificate-expired', 'receiving-mx-hostname': 'mx.policy.test', 'receiving-ip': '192.0.2.1' }
  ])
  await countYesterday(ob.proc.redis, 'retry-rpt.test', 1)
  await countYesterday(ob.proc.redis, 'refused-rpt.test', 1)
})
after(async () => {
  await ob.close()
  await sink.close()
  await dns.close()
  key.remove()
})

const counted = async (result: string): Promise<number> => tlsReportsCounted(await ob.proc.metrics.render(), 'mailto', result)

test('the report is mailed as RFC 8460 §5.3 says, DKIM-signed by the report sender, its attachment the day\'s report', async () => {
  const run = await ob.proc.engine!.sendTlsReports()
  assert.deepEqual(run.sent.map((s) => s.domain), ['mail-rpt.test'])
  const [mail] = sink.to('tlsrpt@reports.example')
  assert.equal(sink.to('tlsrpt@reports.example').length, 1)
  assert.equal(mail!.mailFrom, 'tls-reports@outbox.example')
  const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10)
  const head = mail!.headers
  const subject = head.get('subject')!.replace(/\s+/g, ' ')
  assert.match(head.get('content-type')!, /^multipart\/report; report-type="?tlsrpt"?; boundary=/)
  assert.equal(head.get('tls-report-domain'), 'mail-rpt.test')
  assert.equal(head.get('tls-report-submitter'), 'outbox.example')
  assert.match(subject,
    new RegExp(`^Report Domain: mail-rpt\\.test Submitter: outbox\\.example Report-ID: <${day}\\.[0-9a-f-]+@outbox\\.example>$`))

  const parsed = await simpleParser(mail!.raw)
  assert.equal(parsed.attachments.length, 1)
  const attachment = parsed.attachments[0]!
  assert.equal(attachment.contentType, 'application/tlsrpt+gzip')
  const begin = Date.parse(`${day}T00:00:00Z`) / 1000
  assert.match(attachment.filename!, new RegExp(`^outbox\\.example!mail-rpt\\.test!${begin}!${begin + 86_399}![0-9a-f-]+\\.json\\.gz$`))
  const report = JSON.parse(gunzipSync(attachment.content).toString()) as {
    'report-id': string
    'date-range': Record<string, string>
    policies: Array<{ summary: Record<string, number>, 'failure-details': unknown[] }>
  }
  assert.equal(`Report Domain: mail-rpt.test Submitter: outbox.example Report-ID: <${report['report-id']}>`, subject)
  assert.deepEqual(report['date-range'], { 'start-datetime': `${day}T00:00:00Z`, 'end-datetime': `${day}T23:59:59Z` })
  assert.deepEqual(report.policies[0]!.summary, { 'total-successful-session-count': 3, 'total-failure-session-count': 1 })
  assert.deepEqual(report.policies[0]!['failure-details'], [{
    'result-type': 'certificate-expired', 'receiving-mx-hostname': 'mx.policy.test', 'receiving-ip': '192.0.2.1', 'failed-session-count': 1
  }])

  assert.deepEqual(await dkimVerdict(mail!.raw, dns.address), { result: 'pass', signingDomain: 'outbox.example' })
  const tampered = Buffer.from(mail!.raw.toString('latin1').replace('TLS-Report-Domain: mail-rpt.test', 'TLS-Report-Domain: other.test')
    .replace(/^Subject: Report Domain: mail-rpt/m, 'Subject: Report Domain: other'), 'latin1')
  assert.notEqual((await dkimVerdict(tampered, dns.address)).result, 'pass')

  assert.equal(await counted('sent'), 1)
  assert.equal(await counted('failed'), 1, 'the 451 of tempfail-rpt@')
  assert.equal(await counted('refused'), 1, 'the 550 of permfail-rpt@')
})

test('a 4xx has the report mailed again next run, once it is taken not again; a 5xx is not tried again', async () => {
  assert.deepEqual(sink.rcptLog.filter((l) => l.includes('-rpt@')).sort(),
    ['permfail-rpt@reports.example 550', 'tempfail-rpt@reports.example 451'])
  const second = await ob.proc.engine!.sendTlsReports()
  assert.deepEqual(second.sent.map((s) => `${s.domain} ${s.to}`), ['retry-rpt.test mailto:tempfail-rpt@reports.example'])
  assert.equal(sink.to('tempfail-rpt@reports.example').length, 1)
  const third = await ob.proc.engine!.sendTlsReports()
  assert.deepEqual(third.sent, [])
  assert.equal(sink.to('tempfail-rpt@reports.example').length, 1)
  assert.equal(sink.to('tlsrpt@reports.example').length, 1)
  assert.deepEqual(sink.rcptLog.filter((l) => l.startsWith('permfail-rpt@')), ['permfail-rpt@reports.example 550'])
  assert.equal(await counted('sent'), 2)
  assert.equal(await counted('failed'), 1)
  assert.equal(await counted('refused'), 1)
})
