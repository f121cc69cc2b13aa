import { test } from 'node:test'
import assert from 'node:assert/strict'
import { parseAggregateReport } from '../../../inbound/dmarc_report.ts'
import { DmarcRefusal, unpackReport } from '../../../inbound/dmarc_unpack.ts'
import { readDmarcMail } from '../../../inbound/dmarc_mail.ts'
import { dmarcAddressDomain, dmarcRecordValue } from '../../../protocol/mod.ts'
import { googleReport, gzipOf, microsoftReport, reportMail, zipOf, type ReportRow } from '../../helpers/dmarc_reports.ts'
import { cpuMs, grewAboutLinearly } from '../../helpers/work.ts'

const BEGIN = 1_795_132_800 // 2026-11-19T00:00:00Z
const pass = (ip: string, count: number): ReportRow => ({
  ip, count, dkim: 'pass', spf: 'pass',
  dkimResult: { domain: 'example.test', result: 'pass' }, spfResult: { domain: 'bounces.example.test', result: 'pass' }
})
const forwarded: ReportRow = {
  ip: '198.51.100.7', count: 5, dkim: 'fail', spf: 'fail',
  dkimResult: { domain: 'lists.forwarder.test', result: 'pass' }, spfResult: { domain: 'forwarder.test', result: 'fail' }
}

test('the DMARC record names the domain\'s report address, which reads back to the domain', () => {
  assert.equal(dmarcRecordValue('Mail.Example.test'), 'v=DMARC1; p=none; rua=mailto:dmarc@bounces.mail.example.test')
  assert.equal(dmarcAddressDomain('DMARC@bounces.mail.example.test'), 'mail.example.test')
  assert.equal(dmarcAddressDomain('dmarc@mail.example.test'), undefined)
  assert.equal(dmarcAddressDomain('postmaster@bounces.mail.example.test'), undefined)
})

test('a report shaped like Google\'s is added up: sources, volume, SPF and DKIM pass and alignment, disposition', () => {
  const other: ReportRow = { ...pass('192.0.2.50', 1000), headerFrom: 'not-ours.test' }
  const noAddress: ReportRow = { ...pass('not-an-address', 7) }
  const sub: ReportRow = { ...pass('192.0.2.60', 0), headerFrom: 'news.example.test' }
  const r = parseAggregateReport(googleReport({
    domain: 'example.test', reportId: '4930296432513542016', begin: BEGIN,
    rows: [pass('203.0.113.10', 120), forwarded, other, noAddress, sub]
  }), 100)
  assert.deepEqual({ reporter: r.reporter, id: r.report_id, domain: r.domain, begin: r.begin, records: r.records, skipped: r.skipped }, {
    reporter: 'google.com', id: '4930296432513542016', domain: 'example.test', begin: BEGIN, records: 5, skipped: 2
  })
  assert.deepEqual(r.totals, {
    messages: 125, spf_pass: 120, spf_aligned: 120, dkim_pass: 125, dkim_aligned: 120, dmarc_pass: 120, none: 125, quarantine: 0, reject: 0
  })
  assert.deepEqual(r.sources, [
    { ip: '203.0.113.10', messages: 120, dmarc_pass: 120 }, { ip: '198.51.100.7', messages: 5, dmarc_pass: 0 },
    { ip: '192.0.2.60', messages: 0, dmarc_pass: 0 } // a subdomain of the policy domain is counted
  ])
})

test('a report shaped like Microsoft\'s (namespaces, envelope identifiers) is read the same way', () => {
  const r = parseAggregateReport(microsoftReport({
    domain: 'example.test', reportId: 'a1b2c3', begin: BEGIN, policy: 'quarantine',
    rows: [pass('203.0.113.10', 40), { ...forwarded, ip: '192.0.2.99', count: 2, disposition: 'quarantine' }]
  }), 100)
  assert.equal(r.reporter, 'Enterprise Outlook')
  assert.deepEqual(r.totals, {
    messages: 42, spf_pass: 40, spf_aligned: 40, dkim_pass: 42, dkim_aligned: 40, dmarc_pass: 40, none: 40, quarantine: 2, reject: 0
  })
})

test('a report with a document type, without its metadata, or with too many records is refused', () => {
  const refused = (xml: string, max = 100): DmarcRefusal => {
    try { parseAggregateReport(xml, max) } catch (err) { if (err instanceof DmarcRefusal) return err; throw err }
    assert.fail('not refused')
  }
  const laughs = '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><feedback>&lol2;</feedback>'
  assert.equal(refused(laughs).code, 'malformed')
  assert.equal(refused('<feedback><report_metadata/></feedback>').code, 'malformed')
  const rows = Array.from({ length: 11 }, () => pass('192.0.2.1', 1))
  const many = googleReport({ domain: 'example.test', reportId: '1', begin: BEGIN, rows })
  const e = refused(many, 10)
  assert.equal(e.code, 'too_many_records')
  assert.match(e.message, /11 records, more than the 10 read/)
})

test('gzip and zip attachments are unpacked; decompression stops at the limit whatever the archive says', async () => {
  const xml = Buffer.from(googleReport({ domain: 'example.test', reportId: '1', begin: BEGIN, rows: [pass('192.0.2.1', 1)] }))
  assert.deepEqual(await unpackReport(gzipOf(xml), 1 << 20), xml)
  assert.deepEqual(await unpackReport(zipOf('report.xml', xml), 1 << 20), xml)
  assert.deepEqual(await unpackReport(xml, 1 << 20), xml)
  // a zip bomb: 16 MB of zeros stated as 1 KB, and a gzip of the same
  const zeros = Buffer.alloc(16 * 1024 * 1024)
  for (const bomb of [zipOf('report.xml', zeros, 1024), gzipOf(zeros)]) {
    await assert.rejects(unpackReport(bomb, 1 << 20), (err: DmarcRefusal) => err.code === 'too_large' && /1048576 bytes/.test(err.message))
  }
  // an archive cut short, or something that is none of the three
  await assert.rejects(unpackReport(zipOf('report.xml', xml).subarray(0, 60), 1 << 20), (err: DmarcRefusal) => err.code === 'malformed')
  await assert.rejects(unpackReport(Buffer.from('%PDF-1.4'), 1 << 20), (err: DmarcRefusal) => err.code === 'malformed')
})

test('a report mail is read from its attachment; one without a report is refused', async () => {
  const xml = Buffer.from(microsoftReport({ domain: 'example.test', reportId: 'x', begin: BEGIN, rows: [pass('192.0.2.1', 3)] }))
  const mail = reportMail({
    from: 'dmarcreport@microsoft.com', to: 'dmarc@bounces.example.test', subject: 'Report Domain: example.test',
    filename: 'report.xml.gz', contentType: 'application/octet-stream', data: gzipOf(xml) // recognised by its first bytes
  })
  const read = await readDmarcMail(Buffer.from(mail))
  assert.ok(read.ok)
  assert.equal(read.report.totals.messages, 3)
  const none = await readDmarcMail(Buffer.from('Subject: hi\r\n\r\nhello\r\n'))
  assert.deepEqual(none.ok ? undefined : none.code, 'malformed')
})

test('reading a report costs about linearly in its records (n and 8n)', async (t) => {
  const make = (n: number): string =>
    googleReport({
      domain: 'example.test', reportId: '1', begin: BEGIN,
      rows: Array.from({ length: n }, (_, i) => pass(`10.0.${(i >> 8) & 255}.${i & 255}`, 1))
    })
  const small = make(1_000)
  const large = make(8_000)
  parseAggregateReport(small, 100_000) // warm up
  const a = await cpuMs(async () => { parseAggregateReport(small, 100_000) })
  const b = await cpuMs(async () => { parseAggregateReport(large, 100_000) })
  const figures = `${a.toFixed(0)} ms of CPU for n, ${b.toFixed(0)} ms for 8n`
  t.diagnostic(figures)
  assert.ok(grewAboutLinearly(a, b), figures)
})
