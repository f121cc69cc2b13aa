import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { DEFAULT_DNSBL_ZONES, loadConfig } from '../../config/mod.ts'
import {
  HEALTH_CHECKS, dnsblQueryName, dnsblVerdict, nextSnapshot, overallStatus, worsenedItems, type DomainRecord, type HealthItem
} from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'
import { buildDomain } from '../../gateway/control/domains.ts'
import { checkDomainHealth } from '../../gateway/control/domain_health.ts'
import {
  HEALTH_LOOKUP_CONCURRENCY, HEALTH_LOOKUP_TIMEOUT_MS, LookupFailedError, healthDns, type HealthDns
} from '../../gateway/control/health_lookups.ts'
import { LIVE_CACHE_MS, LIVE_CHECKS_PER_MINUTE } from '../../gateway/control/health_state.ts'
import { DnsServer } from '../helpers/dns_server.ts'

const item = (check: HealthItem['check'], subject: string, status: HealthItem['status']): HealthItem =>
  ({ check, subject, status, message: 'm' })

test('the overall status is the worst checked item; not_checked only when nothing was checked', () => {
  assert.equal(overallStatus([item('spf', 'a', 'ok'), item('dkim', 'b', 'warning'), item('dmarc', 'c', 'not_checked')]), 'warning')
  assert.equal(overallStatus([item('spf', 'a', 'ok'), item('dkim', 'b', 'error'), item('dmarc', 'c', 'warning')]), 'error')
  assert.equal(overallStatus([item('spf', 'a', 'not_checked')]), 'not_checked')
})

test('worse is ok → warning/error or warning → error, or a new item that is not ok; a first check is a baseline', () => {
  const before = nextSnapshot(undefined, [item('spf', 'a', 'ok'), item('dkim', 'b', 'warning'), item('dmarc', 'c', 'error')])
  assert.deepEqual(worsenedItems(undefined, [item('spf', 'a', 'error')]), [])
  const now = [
    item('spf', 'a', 'warning'), item('dkim', 'b', 'error'), item('dmarc', 'c', 'error'), item('blocklist', '192.0.2.1', 'error'),
    item('reverse_dns', '192.0.2.1', 'ok')
  ]
  assert.deepEqual(worsenedItems(before, now).map((w) => [w.check, w.previous_status]),
    [['spf', 'ok'], ['dkim', 'warning'], ['blocklist', null]])
  // better, or the same, is not worse
  assert.deepEqual(worsenedItems(before, [item('spf', 'a', 'ok'), item('dkim', 'b', 'ok'), item('dmarc', 'c', 'error')]), [])
})

test('an item that could not be checked keeps its last status, so a timeout neither worsens nor clears it', () => {
  const before = nextSnapshot(undefined, [item('dkim', 'b', 'error'), item('spf', 'a', 'ok')])
  const after = nextSnapshot(before, [item('dkim', 'b', 'not_checked'), item('spf', 'a', 'not_checked')])
  assert.deepEqual(after, before)
  assert.deepEqual(worsenedItems(before, [item('spf', 'a', 'not_checked')]), [])
})

test('blocklist names: reversed octets, reversed nibbles for IPv6', () => {
  assert.equal(dnsblQueryName('192.0.2.10', 'zen.spamhaus.org'), '10.2.0.192.zen.spamhaus.org')
  assert.equal(dnsblQueryName('2001:db8::1', 'bl.example'),
    '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.bl.example')
})

test('blocklist answers: 127.0.0.x lists; 127.255.255.x (a refused query) and other answers do not', () => {
  assert.deepEqual(dnsblVerdict(['127.0.0.2', '127.0.0.10']), { listed: true, codes: ['127.0.0.2', '127.0.0.10'] })
  assert.deepEqual(dnsblVerdict([]), { listed: false, refused: false })
  assert.deepEqual(dnsblVerdict(['127.255.255.254']), { listed: false, refused: true })
  assert.deepEqual(dnsblVerdict(['198.51.100.7']), { listed: false, refused: true })
})

interface Tables {
  cname?: Record<string, string[]>
  mx?: Record<string, string[]>
  a?: Record<string, string[]>
  ptr?: Record<string, string[]>
  failing?: string[]
}

/** A DNS answered from tables; a name in `failing` fails as a timed-out look-up. */
function tableDns (txt: Record<string, string[]>, more: Tables = {}): HealthDns {
  const look = (table: Record<string, string[]> | undefined, rrtype: string) => async (name: string): Promise<string[]> => {
    if (more.failing?.includes(name)) throw new LookupFailedError(name, rrtype, 'ETIMEOUT')
    return table?.[name] ?? []
  }
  return {
    txt: look(txt, 'TXT'),
    mx: look(more.mx, 'MX'),
    cname: look(more.cname, 'CNAME'),
    a: look(more.a, 'A'),
    aaaa: look({}, 'AAAA'),
    ptr: look(more.ptr, 'PTR'),
    // what mailauth's SPF evaluation reads: TXT as lists of strings, A as addresses
    raw: async (name, rrtype) => {
      const answer = rrtype === 'TXT' ? txt[name]?.map((t) => [t]) : rrtype === 'A' ? more.a?.[name] : undefined
      if (answer === undefined) throw Object.assign(new Error('no such name'), { code: 'ENOTFOUND' })
      return answer
    }
  }
}

const config = loadConfig({ OB_MX_HOST: 'mx.outbox.test' })
/** The SPF record while no egress source exists: the host of OB_PUBLIC_URL. */
const HOST_SPF = 'v=spf1 ip4:127.0.0.1 ~all'
/** A control plane with no organisation records and no egress sources: mail leaves from the host's own address. */
const cp = {
  orgs: { get: () => undefined }, streams: { list: () => [] }, egress: { pool: () => undefined, source: () => undefined, sources: () => [] }
} as unknown as ControlPlane
/** One whose `default` pool has one source, 192.0.2.10 saying EHLO mta.outbox.test. */
const cpWithSource = {
  orgs: { get: () => undefined },
  streams: { list: () => [] },
  egress: {
    pool: (name: string) => ({ name, sources: [{ source: 's1', weight: 100 }] }),
    source: () => ({ name: 's1', address: '192.0.2.10', ehlo: 'mta.outbox.test' }),
    sources: () => [{ name: 's1', address: '192.0.2.10', ehlo: 'mta.outbox.test' }]
  }
} as unknown as ControlPlane

interface CheckOpts { cp?: ControlPlane, zones?: string[], env?: Record<string, string> }

async function checked (domain: DomainRecord, dns: HealthDns, opts: CheckOpts = {}): Promise<HealthItem[]> {
  const c = opts.env === undefined ? config : loadConfig({ OB_MX_HOST: 'mx.outbox.test', ...opts.env })
  return (await checkDomainHealth({ config: c, cp: opts.cp ?? cp, dns }, domain, opts.zones ?? ['bl.example'])).items
}
const find = (items: HealthItem[], check: string): HealthItem => items.find((i) => i.check === check)!

test('DMARC: one record with a policy is ok and says what the policy does; none, two or no p= is an error', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const dmarc = async (records: string[]): Promise<HealthItem> =>
    find(await checked(d, tableDns({ '_dmarc.example.org': records })), 'dmarc')
  assert.match((await dmarc(['v=DMARC1; p=reject'])).message, /policy reject: receivers reject mail that fails DMARC/)
  assert.equal((await dmarc(['v=DMARC1; p=none; rua=mailto:x@example.org'])).status, 'ok')
  assert.equal((await dmarc([])).status, 'error')
  assert.equal((await dmarc(['v=DMARC1; p=none', 'v=DMARC1; p=reject'])).status, 'error')
  assert.equal((await dmarc(['v=DMARC1; rua=mailto:x@example.org'])).status, 'error')
})

test('MTA-STS and TLS-RPT are reported for presence: absent is ok, malformed a warning', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const none = await checked(d, tableDns({}))
  assert.equal(find(none, 'mta_sts').status, 'ok')
  assert.match(find(none, 'mta_sts').message, /No MTA-STS policy/)
  const both = await checked(d, tableDns({
    '_mta-sts.example.org': ['v=STSv1; id=20260101'], '_smtp._tls.example.org': ['v=TLSRPTv1; rua=mailto:tls@example.org']
  }))
  assert.match(find(both, 'mta_sts').message, /is published/)
  assert.match(find(both, 'tls_rpt').message, /is published/)
  const bad = await checked(d, tableDns({ '_mta-sts.example.org': ['v=STSv1;'], '_smtp._tls.example.org': ['v=TLSRPTv1;'] }))
  assert.equal(find(bad, 'mta_sts').status, 'warning')
  assert.equal(find(bad, 'tls_rpt').status, 'warning')
})

test('a failed look-up is not_checked; without known sources reverse DNS and blocklists are not_checked with the reason', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const items = await checked(d, tableDns({}, { failing: ['_dmarc.example.org'] }))
  assert.equal(find(items, 'dmarc').status, 'not_checked')
  assert.match(find(items, 'dmarc').message, /ETIMEOUT/)
  assert.equal(find(items, 'reverse_dns').status, 'not_checked')
  assert.match(find(items, 'blocklist').message, /has no sources: mail leaves from the host's own address/)
  // without sources, SPF is judged by the mechanism the domain was asked to publish
  const spf = d.records.find((r) => r.name === 'example.org' && r.value.startsWith('v=spf1'))!
  assert.equal(find(await checked(d, tableDns({ 'example.org': [spf.value] })), 'spf').status, 'ok')
  assert.equal(find(items, 'spf').status, 'error')
})

test('the tracking host\'s CNAME is checked; without a tracking host it is not_checked', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  assert.equal(find(await checked(d, tableDns({})), 'tracking_cname').status, 'not_checked')
  const publicHost = loadConfig({ OB_MX_HOST: 'mx.outbox.test', OB_PUBLIC_URL: 'https://track.outbox.test' })
  const withTracking: DomainRecord = { ...d, tracking: { host: 'links.example.org' } }
  const check = async (dns: HealthDns): Promise<HealthItem> =>
    find((await checkDomainHealth({ config: publicHost, cp, dns }, withTracking, [])).items, 'tracking_cname')
  const missing = await check(tableDns({}))
  assert.equal(missing.status, 'error')
  assert.equal(missing.subject, 'links.example.org')
  assert.equal((await check(tableDns({}, { cname: { 'links.example.org': ['track.outbox.test'] } }))).status, 'ok')
  // OB_PUBLIC_URL naming an address: there is nothing a CNAME could name
  const byAddress = (await checkDomainHealth({ config, cp, dns: tableDns({}) }, withTracking, [])).items
  assert.equal(find(byAddress, 'tracking_cname').status, 'not_checked')
})

test('a look-up that gets no answer gives up after its timeout', async () => {
  // 192.0.2.1 (TEST-NET-1) answers nothing
  const dns = healthDns(['192.0.2.1:53'], { timeoutMs: 200 })
  const started = Date.now()
  await assert.rejects(dns.txt('example.org'), (err: unknown) => err instanceof LookupFailedError)
  assert.ok(Date.now() - started < 2000)
})

test('DKIM: a signing key\'s record missing or holding another key is an error; a key that does not sign yet is a warning', async () => {
  const verified = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const rsa = verified.records.find((r) => r.value.startsWith('v=DKIM1'))
  const dkim = (items: HealthItem[], name: string): HealthItem => items.find((i) => i.check === 'dkim' && i.subject === name)!
  const other = rsa!.value.replace(/p=.{8}/, 'p=AAAAAAAA')
  assert.equal(dkim(await checked(verified, tableDns({ [rsa!.name]: [other] })), rsa!.name).status, 'error')
  assert.equal(dkim(await checked(verified, tableDns({ [rsa!.name]: [rsa!.value] })), rsa!.name).status, 'ok')
  const edName = `${verified.dkim_ed25519!.selector}._domainkey.example.org`
  assert.equal(dkim(await checked(verified, tableDns({})), edName).status, 'error')
  // a domain not verified yet: its ed25519 key does not sign, so its record missing is a warning
  const pending = await buildDomain(config, 'org_1', 'example.org', false, HOST_SPF)
  const pendingEd = `${pending.dkim_ed25519!.selector}._domainkey.example.org`
  assert.equal(dkim(await checked(pending, tableDns({})), pendingEd).status, 'warning')
})

test('return-path MX: missing is a warning; without OB_MX_HOST it is not_checked', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const mx = (items: HealthItem[]): HealthItem => find(items, 'return_path_mx')
  assert.equal(mx(await checked(d, tableDns({}))).status, 'warning')
  assert.equal(mx(await checked(d, tableDns({}, { mx: { 'bounces.example.org': ['10 mx.outbox.test'] } }))).status, 'ok')
  const noHost = loadConfig({ OB_PUBLIC_URL: 'http://192.0.2.80' })
  const items = (await checkDomainHealth({ config: noHost, cp, dns: tableDns({}) }, d, [])).items
  assert.equal(mx(items).status, 'not_checked')
})

test('MTA-STS or TLS-RPT published twice is a warning', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const items = await checked(d, tableDns({ '_mta-sts.example.org': ['v=STSv1; id=1', 'v=STSv1; id=2'], '_smtp._tls.example.org': [] }))
  assert.equal(find(items, 'mta_sts').status, 'warning')
})

test('another record the domain is asked to publish is a warning when missing', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const withTxt: DomainRecord = { ...d, records: [...d.records, { type: 'TXT', name: 'example.org', value: 'site-verification=1' }] }
  assert.equal(find(await checked(withTxt, tableDns({})), 'record').status, 'warning')
  assert.equal(find(await checked(withTxt, tableDns({ 'example.org': ['site-verification=1'] })), 'record').status, 'ok')
})

test('reverse DNS: no PTR is an error; a name that does not resolve back is a warning; PTR and A agreeing is ok', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const rdns = async (t: Tables): Promise<HealthItem> => find(await checked(d, tableDns({}, t), { cp: cpWithSource }), 'reverse_dns')
  assert.equal((await rdns({})).status, 'error')
  const ptr = { '192.0.2.10': ['mta.outbox.test'] }
  assert.equal((await rdns({ ptr })).status, 'warning')
  assert.match((await rdns({ ptr })).message, /does not resolve back/)
  assert.equal((await rdns({ ptr, a: { 'mta.outbox.test': ['192.0.2.10'] } })).status, 'ok')
})

test('blocklists: none answering is not_checked; no zones configured is not_checked; not listed is ok', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const bl = async (t: Tables, zones: string[]): Promise<HealthItem> =>
    find(await checked(d, tableDns({}, t), { cp: cpWithSource, zones }), 'blocklist')
  assert.equal((await bl({ a: { '10.2.0.192.bl.example': ['127.255.255.254'] } }, ['bl.example'])).status, 'not_checked')
  assert.equal((await bl({ failing: ['10.2.0.192.bl.example'] }, ['bl.example'])).status, 'not_checked')
  assert.match((await bl({}, [])).message, /OB_DNSBL_ZONES=none/)
  assert.equal((await bl({}, ['bl.example'])).status, 'ok')
})

test('SPF with a known source is evaluated for its address, however the record names it', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  // the record asked for before the source existed: it holds the host's address, not the source's
  const asked = await checked(d, tableDns({ 'example.org': [HOST_SPF] }), { cp: cpWithSource })
  assert.equal(find(asked, 'spf').status, 'error')
  assert.match(find(asked, 'spf').message, /192\.0\.2\.10 \(softfail\)/)
  const covering = await checked(d, tableDns({ 'example.org': ['v=spf1 ip4:192.0.2.0/24 -all'] }), { cp: cpWithSource })
  assert.equal(find(covering, 'spf').status, 'ok')
})

test('with OB_EGRESS_SHAPING=off or OB_SMTP_RELAY the sources are not known, and the item says why', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const off = await checked(d, tableDns({}), { cp: cpWithSource, env: { OB_EGRESS_SHAPING: 'off' } })
  assert.match(find(off, 'reverse_dns').message, /OB_EGRESS_SHAPING=off/)
  assert.equal(find(off, 'blocklist').subject, 'host')
  const relay = await checked(d, tableDns({}), { cp: cpWithSource, env: { OB_SMTP_RELAY: 'smtp://relay.example:25' } })
  assert.match(find(relay, 'blocklist').message, /OB_SMTP_RELAY/)
})

test('the default blocklists and interval', () => {
  const c = loadConfig({})
  assert.deepEqual(c.domainHealth.dnsblZones, ['zen.spamhaus.org', 'bl.spamcop.net'])
  assert.equal(c.domainHealth.intervalMs, 3_600_000)
  assert.deepEqual(loadConfig({ OB_DNSBL_ZONES: 'none' }).domainHealth.dnsblZones, [])
})

test('look-ups: 2 s each, at most 16 in flight per process, the rest wait their turn', async () => {
  assert.equal(HEALTH_LOOKUP_TIMEOUT_MS, 2000)
  assert.equal(HEALTH_LOOKUP_CONCURRENCY, 16)
  const server = await DnsServer.start({ TXT: { 'slow.example': ['x'] } })
  try {
    server.delayMs = 150
    const dns = healthDns([server.address], { concurrency: 2 })
    const started = Date.now()
    const answers = await Promise.all(Array.from({ length: 6 }, async () => await dns.txt('slow.example')))
    assert.deepEqual(answers, Array.from({ length: 6 }, () => ['x']))
    // two at a time: three waves of 150 ms
    assert.ok(Date.now() - started >= 3 * 150 - 20, `took ${Date.now() - started} ms`)
  } finally {
    await server.close()
  }
})

test('the docs list every item, the limits and the defaults', () => {
  const doc = readFileSync(new URL('../../../docs/domain-health.md', import.meta.url), 'utf8')
  for (const check of HEALTH_CHECKS) assert.ok(doc.includes(`| \`${check}\` |`), `docs/domain-health.md lacks ${check}`)
  assert.ok(doc.includes(`gives up after ${HEALTH_LOOKUP_TIMEOUT_MS / 1000} seconds`))
  assert.ok(doc.includes(`At most ${HEALTH_LOOKUP_CONCURRENCY} look-ups`))
  assert.equal(LIVE_CACHE_MS, 60_000)
  assert.ok(doc.includes('An answer is reused for a minute'))
  assert.ok(doc.includes(`start ${LIVE_CHECKS_PER_MINUTE} live checks a minute`))
  for (const zone of DEFAULT_DNSBL_ZONES.split(',')) assert.ok(doc.includes(`\`${zone}\``))
})

test('a domain\'s own return-path host is checked as the return path: its SPF and its MX', async () => {
  const d = await buildDomain(config, 'org_1', 'example.org', true, HOST_SPF)
  const own: DomainRecord = { ...d, return_path: { host: 'rp.example.org' } }
  const items = await checked(own, tableDns({ 'rp.example.org': [HOST_SPF] }, { mx: { 'rp.example.org': ['10 mx.outbox.test'] } }))
  const at = (check: string): HealthItem | undefined => items.find((i) => i.check === check && i.subject === 'rp.example.org')
  assert.equal(at('return_path_spf')?.status, 'ok')
  assert.equal(at('return_path_mx')?.status, 'ok')
})
