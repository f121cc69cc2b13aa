import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { Transporter } from 'nodemailer'
import { TestOutbox, type TestOrg } from '../../helpers/outbox.ts'
import { DnsServer } from '../../helpers/dns_server.ts'
import { addRoute, inboundClient } from '../../helpers/inbound.ts'
import { RawSmtp } from '../../helpers/raw_smtp.ts'
import { googleReport, gzipOf, microsoftReport, reportFileName, reportMail, zipOf, type ReportRow } from '../../helpers/dmarc_reports.ts'
import { mainThreadCpuMs } from '../../helpers/work.ts'
import { eventually } from '../../helpers/waiting.ts'
import { DmarcSummaries } from '../../../stores/dmarc/mod.ts'

// DMARC aggregate reports come in through the real inbound SMTP listener, are read on the analysis threads and
// summarised in Redis; the summary is read back through GET /v1/domains/{id}/dmarc.

let dns: DnsServer
let ob: TestOutbox
let org: TestOrg
let other: TestOrg
let smtp: Transporter

const DAY_S = 86_400
/** Yesterday, 00:00 UTC: the day a receiver's daily report covers. */
const BEGIN = Math.floor(Date.now() / 1000 / DAY_S) * DAY_S - DAY_S
const DATE = new Date(BEGIN * 1000).toISOString().slice(0, 10)

before(async () => {
  dns = await DnsServer.start({})
  ob = await TestOutbox.start({ env: { OB_DNS_SERVERS: dns.address } })
  org = await ob.org()
  other = await ob.org()
  smtp = inboundClient(ob)
})
after(async () => {
  smtp.close()
  await ob.close()
  await dns.close()
})

const rua = (o: TestOrg): string => `dmarc@bounces.${o.domain}`

const pass = (o: TestOrg, ip: string, count: number): ReportRow => ({
  ip, count, dkim: 'pass', spf: 'pass',
  dkimResult: { domain: o.domain, result: 'pass' }, spfResult: { domain: `bounces.${o.domain}`, result: 'pass' }
})
const failing = (ip: string, count: number, disposition: 'none' | 'quarantine' = 'none'): ReportRow => ({
  ip, count, disposition, dkim: 'fail', spf: 'fail',
  dkimResult: { domain: 'lists.forwarder.test', result: 'pass' }, spfResult: { domain: 'forwarder.test', result: 'fail' }
})

function googleMail (o: TestOrg, to: string, reportId: string, rows: ReportRow[]): string {
  return reportMail({
    from: 'noreply-dmarc-support@google.com', to, subject: `Report domain: ${o.domain} Submitter: google.com Report-ID: ${reportId}`,
    filename: reportFileName('google.com', o.domain, BEGIN, 'xml.gz'), contentType: 'application/gzip',
    data: gzipOf(googleReport({ domain: o.domain, reportId, begin: BEGIN, rows }))
  })
}

function microsoftMail (o: TestOrg, to: string, reportId: string, rows: ReportRow[]): string {
  const xml = Buffer.from(microsoftReport({ domain: o.domain, reportId, begin: BEGIN, policy: 'quarantine', rows }))
  return reportMail({
    from: 'dmarcreport@microsoft.com', to, subject: `Report Domain: ${o.domain} Submitter: enterprise.protection.outlook.com`,
    filename: reportFileName('enterprise.protection.outlook.com', o.domain, BEGIN, 'zip'), contentType: 'application/zip',
    data: zipOf(`enterprise.protection.outlook.com!${o.domain}!${BEGIN}!${BEGIN + DAY_S}.xml`, xml)
  })
}

/** The SMTP reply to DATA: `250 …` or the rejection (nodemailer puts it on the error). */
async function deliver (to: string, raw: string): Promise<string> {
  try {
    return (await smtp.sendMail({ envelope: { from: 'noreply-dmarc-support@google.com', to: [to] }, raw })).response ?? ''
  } catch (err) {
    return (err as { response?: string }).response ?? String(err)
  }
}

async function summary (o: TestOrg, query = ''): Promise<any> {
  const r = await ob.request('GET', `/v1/domains/${o.domainId}/dmarc${query}`, { key: o.adminKey })
  assert.equal(r.status, 200, r.text)
  return r.body
}

async function metric (result: string): Promise<number> {
  const text = await ob.proc.metrics.render()
  return Number(new RegExp(`^outbox_dmarc_reports_total\\{result="${result}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0)
}

test('the domain lists a DMARC record whose rua is its report address here', async () => {
  const r = await ob.request('GET', `/v1/domains/${org.domainId}`, { key: org.adminKey })
  const dmarc = r.body.records.find((x: { name: string }) => x.name === `_dmarc.${org.domain}`)
  assert.equal(dmarc.value, `v=DMARC1; p=none; rua=mailto:${rua(org)}`)
  const body = await summary(org)
  assert.equal(body.rua, `mailto:${rua(org)}`)
  // the default range: the last 7 days, today included
  const today = new Date().toISOString().slice(0, 10)
  assert.deepEqual([body.from, body.to], [new Date(Date.parse(today) - 6 * DAY_S * 1000).toISOString().slice(0, 10), today])
  // a domain stored while the suggested rua was the domain's own mailbox is shown the address read here
  const stored = ob.proc.cp.domain(other.orgId, other.domainId)!
  const old = stored.records.map((r) => r.name === `_dmarc.${other.domain}`
    ? { ...r, value: `v=DMARC1; p=none; rua=mailto:dmarc-reports@${other.domain}` }
    : r)
  await ob.proc.cp.domains.put(`${other.orgId}.${other.domainId}`, { ...stored, records: old })
  const storedOld = (): boolean => ob.proc.cp.domain(other.orgId, other.domainId)!.records.some((r) => r.value.includes('dmarc-reports@'))
  await eventually(() => storedOld() || undefined, 'the old record stored')
  const shown = await ob.request('GET', `/v1/domains/${other.domainId}`, { key: other.adminKey })
  const record = shown.body.records.find((x: { name: string }) => x.name === `_dmarc.${other.domain}`)
  assert.equal(record.value, `v=DMARC1; p=none; rua=mailto:${rua(other)}`)
})

test('a report like Google\'s (gzip) and one like Microsoft\'s (zip) are summarised for the day they cover', async () => {
  const g = await deliver(rua(org), googleMail(org, rua(org), '4930296432513542016', [
    pass(org, '203.0.113.10', 120), failing('198.51.100.7', 5), { ...pass(org, '192.0.2.50', 1000), headerFrom: 'elsewhere.test' }
  ]))
  assert.match(g, /^250 .*DMARC report 4930296432513542016 from google\.com accepted \(3 records\)/)
  const m = await deliver(rua(org), microsoftMail(org, rua(org), 'b6e1f3a0c2d94e8f', [
    pass(org, '203.0.113.10', 40), failing('192.0.2.99', 2, 'quarantine')
  ]))
  assert.match(m, /^250 .*from Enterprise Outlook accepted \(2 records\)/)
  const body = await summary(org)
  assert.equal(body.domain, org.domain)
  const day = body.days.find((d: { date: string }) => d.date === DATE)
  assert.deepEqual(day, {
    date: DATE,
    reports: 2,
    reporters: [{ name: 'Enterprise Outlook', reports: 1 }, { name: 'google.com', reports: 1 }],
    messages: 167,
    spf: { pass: 160, aligned: 160 },
    dkim: { pass: 167, aligned: 160 },
    dmarc: { pass: 160, fail: 7 },
    disposition: { none: 165, quarantine: 2, reject: 0 },
    sources: [
      { ip: '203.0.113.10', messages: 160, dmarc_pass: 160 },
      { ip: '198.51.100.7', messages: 5, dmarc_pass: 0 },
      { ip: '192.0.2.99', messages: 2, dmarc_pass: 0 }
    ]
  })
  // the same report sent again (a reporter's retry) counts once
  const again = await deliver(rua(org), googleMail(org, rua(org), '4930296432513542016', [pass(org, '203.0.113.10', 120)]))
  assert.match(again, /^250 .*already received/)
  assert.equal((await summary(org)).days.find((d: { date: string }) => d.date === DATE).messages, 167)
  assert.ok(await metric('accepted') >= 2)
  assert.equal(await metric('duplicate'), 1)
})

test('a report about another organisation\'s domain is refused with a 550 and counted, and reaches no summary', async () => {
  const before = await metric('other_organisation')
  // sent to this organisation's address, about the other organisation's domain
  const reply = await deliver(rua(org), googleMail(other, rua(org), 'forged-1', [pass(other, '192.0.2.66', 999)]))
  assert.match(reply, /^550 5\.7\.1 This DMARC report is about org\S+, which is not a domain of the organisation dmarc@bounces\.\S+ belongs to/)
  // and about a domain nobody here has
  const nobody = await deliver(rua(org), googleMail({ ...other, domain: 'nobody-here.test' }, rua(org), 'forged-2', []))
  assert.match(nobody, /^550 5\.7\.1 .*nobody-here\.test/)
  assert.equal(await metric('other_organisation'), before + 2)
  assert.deepEqual((await summary(other)).days, [])
  const day = (await summary(org)).days.find((d: { date: string }) => d.date === DATE)
  assert.equal(day?.sources.some((s: { ip: string }) => s.ip === '192.0.2.66') ?? false, false)
})

test('a message without a report, a report of another time, and one with too many records are refused', async () => {
  const none = await deliver(rua(org), 'From: someone@sender.test\r\nSubject: hello\r\n\r\nJust text.\r\n')
  assert.match(none, /^550 5\.6\.0 No DMARC report found/)
  const old = reportMail({
    from: 'noreply-dmarc-support@google.com', to: rua(org), subject: 'Report', filename: 'old.xml.gz', contentType: 'application/gzip',
    data: gzipOf(googleReport({ domain: org.domain, reportId: 'old-1', begin: BEGIN - 100 * DAY_S, rows: [pass(org, '192.0.2.5', 1)] }))
  })
  assert.match(await deliver(rua(org), old), /^550 5\.6\.0 DMARC report date range does not begin within the last 62 days/)
  const head = googleReport({ domain: org.domain, reportId: 'many-1', begin: BEGIN, rows: [] }).replace('</feedback>', '')
  const many = reportMail({
    from: 'noreply-dmarc-support@google.com', to: rua(org), subject: 'Report', filename: 'many.xml.gz', contentType: 'application/gzip',
    data: gzipOf(`${head}${'<record></record>'.repeat(50_001)}</feedback>`)
  })
  assert.match(await deliver(rua(org), many), /^552 5\.3\.4 DMARC report has 50001 records, more than the 50000 read/)
})

test('another organisation\'s domain summary is refused (403), as every resource of another organisation', async () => {
  const r = await ob.request('GET', `/v1/domains/${org.domainId}/dmarc`, { key: other.adminKey })
  assert.equal(r.status, 403)
  assert.equal(r.body.error.code, 'forbidden')
  const bad = await ob.request('GET', `/v1/domains/${org.domainId}/dmarc?from=2026-01-01&to=2026-03-01`, { key: org.adminKey })
  assert.equal(bad.status, 400)
})

test('a zip bomb and a 50 MB XML are refused while other mail keeps being taken', async () => {
  await addRoute(ob, org, `hello@${org.domain}`, false)
  const bomb = reportMail({
    from: 'dmarc@bomb.test', to: rua(org), subject: 'Report', filename: 'report.zip', contentType: 'application/zip',
    data: zipOf('report.xml', Buffer.alloc(100 * 1024 * 1024, 0x20), 4096) // 100 MB of spaces, stated as 4 KB
  })
  const row = '<record><row><source_ip>192.0.2.1</source_ip><count>1</count></row></record>\n'
  const huge = Buffer.from(`<feedback>${row.repeat(Math.ceil(50 * 1024 * 1024 / row.length))}</feedback>`)
  const hugeGzip = reportMail({
    from: 'dmarc@big.test', to: rua(org), subject: 'Report', filename: 'report.xml.gz', contentType: 'application/gzip', data: gzipOf(huge)
  })
  // uncompressed it is past the 25 MB SMTP limit (refused before DATA); 15 MB of it is past the reports' own limit
  const hugePlain = reportMail({
    from: 'dmarc@big.test', to: rua(org), subject: 'Report', filename: 'report.xml', contentType: 'text/xml',
    data: huge.subarray(0, 15 * 1024 * 1024)
  })
  const tooLarge = await metric('too_large')
  const idle = await RawSmtp.open(ob.proc.inbound!.port)
  const replies = Promise.all([deliver(rua(org), bomb), deliver(rua(org), hugeGzip), deliver(rua(org), hugePlain)])
  // meanwhile an ordinary message is taken, and an idle session is answered
  const ordinary = await smtp.sendMail({
    envelope: { from: 'friend@sender.test', to: [`hello@${org.domain}`] }, raw: 'Subject: hi\r\n\r\nhello\r\n'
  })
  assert.match(ordinary.response ?? '', /^250 /)
  assert.match(await idle.command('NOOP'), /^250 /)
  const [b, g, p] = await replies
  assert.match(b!, /^552 5\.3\.4 DMARC report XML larger than 20971520 bytes once decompressed/)
  assert.match(g!, /^552 5\.3\.4 DMARC report XML larger than 20971520 bytes once decompressed/)
  assert.match(p!, /^552 5\.3\.4 DMARC report message larger than 10485760 bytes/)
  assert.equal(await metric('too_large'), tooLarge + 3)
  await idle.quit()
})

test('a report is read on an analysis thread: the event loop spends little of the CPU it takes', async (t) => {
  const rows = Array.from({ length: 20_000 }, (_, i) => pass(org, `10.1.${(i >> 8) & 255}.${i & 255}`, 1))
  const mail = googleMail(org, rua(org), 'large-1', rows)
  const mainBefore = mainThreadCpuMs()
  const allBefore = process.cpuUsage()
  const reply = await deliver(rua(org), mail)
  const mainMs = mainThreadCpuMs() - mainBefore
  const all = process.cpuUsage(allBefore)
  const allMs = (all.user + all.system) / 1000
  const figures = `${allMs.toFixed(0)} ms of CPU for the report, ${mainMs} ms of it on the event loop's thread`
  t.diagnostic(figures)
  assert.match(reply, /^250 .*accepted \(20000 records\)/)
  assert.ok(mainMs < allMs / 2, figures)
  // 20 000 sources: the 200 busiest are kept for the day, the rest added up
  const day = (await summary(org)).days.find((d: { date: string }) => d.date === DATE)
  assert.equal(day.sources.length, 200)
  assert.equal(day.other_sources.messages + day.sources.filter((s: { ip: string }) => s.ip.startsWith('10.1.')).length, 20_000)
})

test('a report address takes mail alone in its transaction', async () => {
  const s = await RawSmtp.open(ob.proc.inbound!.port)
  await s.command('EHLO reporter.test')
  await s.command('MAIL FROM:<noreply-dmarc-support@google.com>')
  assert.match(await s.command(`RCPT TO:<${rua(org)}>`), /^250 /)
  assert.match(await s.command(`RCPT TO:<hello@${org.domain}>`), /^452 4\.5\.3 DMARC reports are taken in a transaction of their own/)
  assert.match(await s.command('RSET'), /^250 /)
  await s.command('MAIL FROM:<friend@sender.test>')
  assert.match(await s.command(`RCPT TO:<hello@${org.domain}>`), /^250 /)
  assert.match(await s.command(`RCPT TO:<${rua(org)}>`), /^452 4\.5\.3 /)
  await s.quit()
})

test('a domain takes a bounded number of reports a day; a resent report counts once', async () => {
  const summaries = new DmarcSummaries(ob.proc.redis)
  const report = (id: string): Parameters<DmarcSummaries['add']>[1] => ({
    reporter: 'example.net', report_id: id, domain: other.domain, begin: BEGIN, end: BEGIN + DAY_S, records: 0, skipped: 0, sources: [],
    totals: { messages: 0, spf_pass: 0, spf_aligned: 0, dkim_pass: 0, dkim_aligned: 0, dmarc_pass: 0, none: 0, quarantine: 0, reject: 0 }
  })
  assert.equal(await summaries.add(other.domainId, report('a'), 2), 'added')
  assert.equal(await summaries.add(other.domainId, report('a'), 2), 'duplicate')
  assert.equal(await summaries.add(other.domainId, report('b'), 2), 'added')
  assert.equal(await summaries.add(other.domainId, report('c'), 2), 'rate_limited')
  assert.equal(await summaries.takenToday(other.domainId), 2)
  // a day keeps its first 50 reporters by name, later ones as `other`
  for (let i = 0; i < 51; i++) await summaries.add(other.domainId, { ...report(`r${i}`), reporter: `reporter-${i}.test` }, 1000)
  const day = (await summary(other)).days.find((d: { date: string }) => d.date === DATE)
  assert.equal(day.reporters.length, 51)
  // example.net and reporter-0 … reporter-48 are the first 50; reporter-49 and reporter-50 are `other`
  assert.deepEqual(day.reporters.find((r: { name: string }) => r.name === 'other'), { name: 'other', reports: 2 })
  // kept 90 days after the last report
  const [key] = await ob.proc.redis.keys(`ob:dmarc:{${other.domainId}}:d:*`)
  const ttlDays = await ob.proc.redis.pttl(key!) / 86_400_000
  assert.ok(ttlDays > 89.9 && ttlDays <= 90, `${ttlDays}`)
  // once a domain took 200 reports today, its address refuses more at RCPT TO
  for (let i = 0; await summaries.takenToday(other.domainId) < 200; i++) await summaries.add(other.domainId, report(`fill${i}`), 200)
  const s = await RawSmtp.open(ob.proc.inbound!.port)
  await s.command('EHLO reporter.test')
  await s.command('MAIL FROM:<noreply-dmarc-support@google.com>')
  assert.match(await s.command(`RCPT TO:<${rua(other)}>`), /^550 5\.7\.1 dmarc@bounces\.\S+ has taken all the DMARC reports it takes today \(200\)/)
  await s.quit()
  assert.ok(await metric('rate_limited') >= 1)
})
