import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { Resolver } from 'node:dns/promises'
import { gzipSync } from 'node:zlib'
import { SmtpSink } from '../../helpers/smtp_sink.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { freePort } from '../../helpers/ports.ts'
import { TlsReportMailer, type TlsReportMailerOptions } from '../../../engine/tls/tls_report_mailer.ts'

/**
 * Where a TLS report mail goes and when it ends (docs/delivery.md, "TLS reports"): the MX host, else the domain
 * itself; a null MX, a domain that does not exist, a host on a non-public address or a `mailto:` that is not one
 * address end it; a server that does not answer has it tried again.
 */
let sink: SmtpSink
let dns: DnsServer
const resolver = new Resolver({ timeout: 2000, tries: 1 })
const sender = {
  from: 'tls-reports@outbox.example',
  dkim: { domain: 'outbox.example', selector: 'tlsrpt', key: generateKeyPairSync('ed25519').privateKey }
}
const report = {
  domain: 'mail.example',
  submitter: 'outbox.example',
  reportId: '2026-11-27.1@outbox.example',
  uniqueId: '1',
  begin: Date.parse('2026-11-27T00:00:00Z'),
  end: Date.parse('2026-11-27T23:59:59Z'),
  gzip: gzipSync('{}')
}

before(async () => {
  sink = await SmtpSink.start()
  dns = await DnsServer.start({
    MX: {
      'nullmx.example': [{ exchange: '.', priority: 0 }],
      'private.example': [{ exchange: 'mx.private.example', priority: 10 }]
    },
    A: { 'implicit.example': ['127.0.0.1'], 'mx.private.example': ['10.1.2.3'] }
  })
  resolver.setServers([dns.address])
})
after(async () => {
  await sink.close()
  await dns.close()
})

function mailer (opts: Partial<TlsReportMailerOptions> = {}): TlsReportMailer {
  return new TlsReportMailer({ sender, resolver, allowPrivate: true, port: sink.port, ca: undefined, ...opts })
}

test('a domain without an MX record gets the mail at its own address', async () => {
  const m = mailer()
  try {
    assert.deepEqual(await m.send('mailto:tlsrpt@implicit.example', report), { result: 'sent' })
    assert.equal(sink.to('tlsrpt@implicit.example').length, 1)
  } finally { m.close() }
})

test('a null MX, a domain that does not exist, a host on a private address or a malformed mailto: end it', async () => {
  const strict = mailer({ allowPrivate: false })
  try {
    const refused = async (uri: string): Promise<string> => {
      const outcome = await strict.send(uri, report)
      assert.equal(outcome.result, 'refused', `${uri}: ${JSON.stringify(outcome)}`)
      return 'reason' in outcome ? outcome.reason : ''
    }
    assert.match(await refused('mailto:tlsrpt@nullmx.example'), /null MX/)
    assert.match(await refused('mailto:tlsrpt@nowhere.example'), /does not exist/)
    assert.match(await refused('mailto:tlsrpt@private.example'), /not on public addresses/)
    assert.match(await refused('mailto:a@implicit.example,b@implicit.example'), /not a mail address/)
    assert.equal(sink.connections, 1, 'only the first test\'s')
  } finally { strict.close() }
})

test('a server that does not answer has it tried again', async () => {
  const m = mailer({ port: await freePort() })
  try {
    const outcome = await m.send('mailto:tlsrpt@implicit.example', report)
    assert.equal(outcome.result, 'failed', JSON.stringify(outcome))
  } finally { m.close() }
})
