import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { TestOutbox } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { HttpsReceiver, testCa } from '../../helpers/https_receiver.ts'
import { countYesterday, tlsReportsCounted } from '../../helpers/tls_reports.ts'

/**
 * Without a report sender (OB_REPORT_FROM unset) a `mailto:` rua gets nothing, and that shows: a warning at start and
 * `outbox_tls_reports_total{transport="mailto",result="not_configured"}` (docs/delivery.md, "TLS reports"). The
 * https: rua of the same record still gets its POST.
 */
test('no report sender: the mailto: rua is not mailed, counted not_configured, warned at start', async () => {
  const sink = await SmtpSink.start()
  const rua = await HttpsReceiver.start()
  const dns = await DnsServer.start({
    MX: { 'reports.example': [{ exchange: 'mx.reports.example', priority: 10 }] },
    A: { 'mx.reports.example': ['127.0.0.1'] },
    TXT: { '_smtp._tls.nosender-rpt.test': [`v=TLSRPTv1; rua=mailto:tlsrpt@reports.example,${rua.url('/tlsrpt')}`] }
  })
  const logs: Array<{ level: number, msg: string }> = []
  const stream = new Writable({ write (chunk, _enc, cb) { logs.push(JSON.parse(String(chunk)) as { level: number, msg: string }); cb() } })
  const ob = await TestOutbox.start({
    env: {
      OB_ROLE: 'engine',
      OB_DNS_SERVERS: dns.address,
      OB_SMTP_ALLOW_PRIVATE: 'true',
      OB_SMTP_CA_FILE: testCa().caFile,
      OB_SMTP_OUTBOUND_PORT: String(sink.port)
    },
    log: { level: 'warn', stream }
  })
  try {
    assert.equal(logs.filter((l) => l.level === 40 && l.msg.includes('no report sender') && l.msg.includes('OB_REPORT_FROM')).length, 1,
      JSON.stringify(logs))
    await countYesterday(ob.proc.redis, 'nosender-rpt.test', 2)
    const run = await ob.proc.engine!.sendTlsReports()
    assert.deepEqual(run.sent.map((s) => s.to), [rua.url('/tlsrpt')])
    await rua.waitFor(1, { path: '/tlsrpt' })
    assert.equal(sink.connections, 0)
    const scrape = await ob.proc.metrics.render()
    assert.equal(tlsReportsCounted(scrape, 'mailto', 'not_configured'), 1)
    assert.equal(tlsReportsCounted(scrape, 'mailto', 'sent'), 0)
    assert.equal(tlsReportsCounted(scrape, 'https', 'sent'), 1)

    // done with: the next run neither mails nor counts it again
    const again = await ob.proc.engine!.sendTlsReports()
    assert.deepEqual(again.sent, [])
    assert.equal(sink.connections, 0)
    assert.equal(tlsReportsCounted(await ob.proc.metrics.render(), 'mailto', 'not_configured'), 1)
  } finally {
    await ob.close()
    await sink.close()
    await rua.close()
    await dns.close()
  }
})
