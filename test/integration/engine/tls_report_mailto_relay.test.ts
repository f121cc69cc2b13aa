import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TestOutbox } from '../../helpers/outbox.ts'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { countYesterday, dkimVerdict, reportSenderKey } from '../../helpers/tls_reports.ts'

/**
 * With OB_SMTP_RELAY the report mail goes through the relay, as all mail does (docs/delivery.md, "TLS reports"):
 * counters of days from before the relay was set are still reported, and the rua's domain's MX is not asked for.
 */
test('the report to a mailto: rua goes through the relay, signed', async () => {
  const relay = await SmtpSink.start()
  const key = reportSenderKey()
  const dns = await DnsServer.start({
    TXT: {
      [`${key.selector}._domainkey.${key.domain}`]: [key.record],
      '_smtp._tls.relay-rpt.test': ['v=TLSRPTv1; rua=mailto:tlsrpt@reports.example']
    }
  })
  const ob = await TestOutbox.start({ env: { OB_ROLE: 'engine', OB_DNS_SERVERS: dns.address, OB_SMTP_RELAY: relay.url, ...key.env } })
  try {
    await countYesterday(ob.proc.redis, 'relay-rpt.test', 4)
    const run = await ob.proc.engine!.sendTlsReports()
    assert.deepEqual(run.sent.map((s) => s.to), ['mailto:tlsrpt@reports.example'])
    const [mail] = relay.to('tlsrpt@reports.example')
    assert.equal(mail!.headers.get('tls-report-domain'), 'relay-rpt.test')
    assert.equal((await dkimVerdict(mail!.raw, dns.address)).result, 'pass')
    assert.ok(!dns.queries.some((q) => q.startsWith('MX ')), dns.queries.join(', '))
  } finally {
    await ob.close()
    await relay.close()
    await dns.close()
    key.remove()
  }
})
