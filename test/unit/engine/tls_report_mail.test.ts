import { test } from 'node:test'
import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync, gzipSync } from 'node:zlib'
import { simpleParser } from 'mailparser'
import { authenticate } from 'mailauth'
import { composeTlsReportMail, tlsReportFilename, tlsReportSubject } from '../../../engine/tls/tls_report_mail.ts'
import { mailtoAddress, reportSender } from '../../../engine/tls/tls_report_mailer.ts'
import { loadConfig } from '../../../config/mod.ts'

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const dkim = { domain: 'outbox.example', selector: 'tlsrpt', key: privateKey }
const begin = Date.parse('2026-11-27T00:00:00Z')
const end = Date.parse('2026-11-27T23:59:59Z')
const report = {
  from: 'tls-reports@outbox.example',
  to: 'tlsrpt@reports.example',
  domain: 'mail.example',
  submitter: 'outbox.example',
  reportId: '2026-11-27.4f7c@outbox.example',
  uniqueId: '4f7c',
  begin,
  end,
  gzip: gzipSync(JSON.stringify({ 'report-id': '2026-11-27.4f7c@outbox.example' }))
}

test('the file name and subject are those of RFC 8460 §5.1 and §5.3', () => {
  assert.equal(tlsReportFilename(report), 'outbox.example!mail.example!1795737600!1795823999!4f7c.json.gz')
  assert.equal(tlsReportSubject(report),
    'Report Domain: mail.example Submitter: outbox.example Report-ID: <2026-11-27.4f7c@outbox.example>')
})

test('the mail is multipart/report; report-type=tlsrpt with a text part and the gzipped report, with the TLS-Report headers', async () => {
  const { raw, messageId } = await composeTlsReportMail(report, dkim)
  const text = raw.toString('latin1')
  const head = text.slice(0, text.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ')
  assert.match(head, /^Content-Type: multipart\/report; report-type="?tlsrpt"?; boundary=/m)
  assert.match(head, /^TLS-Report-Domain: mail\.example$/m)
  assert.match(head, /^TLS-Report-Submitter: outbox\.example$/m)
  assert.match(head, /^DKIM-Signature: .*d=outbox\.example;.*s=tlsrpt;/m)
  const mail = await simpleParser(raw)
  assert.equal(mail.subject, tlsReportSubject(report))
  assert.equal(mail.messageId, messageId)
  assert.equal(mail.from?.value[0]?.address, report.from)
  assert.match(mail.text ?? '', /aggregate TLS report/)
  assert.equal(mail.attachments.length, 1)
  const attachment = mail.attachments[0]!
  assert.equal(attachment.contentType, 'application/tlsrpt+gzip')
  assert.equal(attachment.filename, tlsReportFilename(report))
  assert.deepEqual(JSON.parse(gunzipSync(attachment.content).toString()), { 'report-id': report.reportId })
})

test('the DKIM signature verifies for the sender\'s domain, and not once the report is changed', async () => {
  const { raw } = await composeTlsReportMail(report, dkim)
  const p = (publicKey.export({ type: 'spki', format: 'der' })).toString('base64')
  const resolver = async (name: string, rr: string): Promise<unknown> => {
    if (rr === 'TXT' && name === 'tlsrpt._domainkey.outbox.example') return [[`v=DKIM1; k=rsa; p=${p}`]]
    throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
  }
  const opts = { ip: '127.0.0.1', helo: 'mx.test', sender: report.from, mta: 'mx.test', resolver } as Parameters<typeof authenticate>[1]
  const good = await authenticate(raw, opts)
  assert.equal(good.dkim.results[0]!.status.result, 'pass', JSON.stringify(good.dkim.results[0]!.status))
  assert.equal(good.dkim.results[0]!.signingDomain, 'outbox.example')
  const tampered = Buffer.from(raw.toString('latin1').replace('TLS report (RFC 8460)', 'TLS report (RFC 8461)'), 'latin1')
  assert.notEqual((await authenticate(tampered, opts)).dkim.results[0]!.status.result, 'pass')
})

test('a mailto: rua is one plain address, percent-decoded, without its fields', () => {
  assert.equal(mailtoAddress('mailto:tlsrpt@reports.example'), 'tlsrpt@reports.example')
  assert.equal(mailtoAddress('MAILTO:tls%2Brpt@reports.example?subject=x'), 'tls+rpt@reports.example')
  assert.equal(mailtoAddress('mailto:a@x.example,b@y.example'), undefined)
  assert.equal(mailtoAddress('mailto:a@x.example%0D%0ABcc:b@y.example'), undefined)
  assert.equal(mailtoAddress('mailto:%E0'), undefined)
  assert.equal(mailtoAddress('https://reports.example/tlsrpt'), undefined)
})

test('the report sender is three settings together, or none', () => {
  assert.equal(loadConfig({}).smtp.reportSender, undefined)
  const sender = loadConfig({
    OB_REPORT_FROM: 'TLS-Reports@Outbox.Example', OB_REPORT_DKIM_SELECTOR: 'tlsrpt', OB_REPORT_DKIM_KEY_FILE: '/etc/outbox/tlsrpt.pem'
  }).smtp.reportSender
  assert.deepEqual(sender, {
    from: 'TLS-Reports@outbox.example', domain: 'outbox.example', dkimSelector: 'tlsrpt', dkimKeyFile: '/etc/outbox/tlsrpt.pem'
  })
  assert.throws(() => loadConfig({ OB_REPORT_FROM: 'tls-reports@outbox.example' }),
    (err: Error & { variables?: string[] }) => {
      assert.deepEqual(err.variables, ['OB_REPORT_DKIM_SELECTOR', 'OB_REPORT_DKIM_KEY_FILE'])
      return true
    })
  assert.throws(() => loadConfig({ OB_REPORT_FROM: 'not an address', OB_REPORT_DKIM_SELECTOR: 's', OB_REPORT_DKIM_KEY_FILE: '/k' }),
    /OB_REPORT_FROM/)
})

test('the report sender\'s key is read once at start; one that cannot be used is a configuration error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outbox-tlsrpt-'))
  try {
    const settings = {
      from: 'tls-reports@outbox.example', domain: 'outbox.example', dkimSelector: 'tlsrpt', dkimKeyFile: join(dir, 'k.pem')
    }
    writeFileSync(settings.dkimKeyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }))
    const sender = reportSender(settings)!
    assert.equal(sender.from, 'tls-reports@outbox.example')
    assert.deepEqual({ ...sender.dkim, key: sender.dkim.key.asymmetricKeyType },
      { domain: 'outbox.example', selector: 'tlsrpt', key: 'rsa' })
    assert.equal(reportSender(undefined), undefined)
    for (const content of [undefined, 'not a key', publicKey.export({ type: 'spki', format: 'pem' })]) {
      const file = join(dir, 'bad.pem')
      rmSync(file, { force: true })
      if (content !== undefined) writeFileSync(file, content)
      assert.throws(() => reportSender({ ...settings, dkimKeyFile: file }), (err: Error & { variables?: string[] }) => {
        assert.deepEqual(err.variables, ['OB_REPORT_DKIM_KEY_FILE'])
        return true
      })
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
