import type { Config } from '../../config/mod.ts'
import { overallStatus, type DomainHealth, type DomainRecord, type HealthItem } from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'
import { requestedRecords, returnPathDomain, type ShownRecord } from './domains.ts'
import { found } from './domain_verify.ts'
import { dkimRecordName } from './dkim_keys.ts'
import { spfPolicy } from './spf.ts'
import { LookupFailedError, type HealthDns } from './health_lookups.ts'
import { blocklistItem, domainSources, reverseDnsItem, spfCoverage, type HealthSource } from './health_sources.ts'

/**
 * A domain's health, looked up live: every record the domain is asked to publish (the same list verification
 * checks, gateway/control/domains.ts `requestedRecords`, so a record added there is checked here too), the DMARC
 * policy, whether SPF passes for every egress source, MTA-STS and TLS-RPT, and the sources' reverse DNS and
 * blocklist listings. Each item is ok, warning, error or not_checked (a look-up failed or there is nothing to look
 * up), with a message for a person. Look-ups are bounded by `HealthDns` (timeouts, concurrency).
 */

export interface HealthCheckDeps {
  readonly config: Config
  readonly cp: ControlPlane
  readonly dns: HealthDns
}

type Item = HealthItem

function notChecked (check: Item['check'], subject: string, err: unknown): Item {
  if (!(err instanceof LookupFailedError)) throw err
  return { check, subject, status: 'not_checked', message: `${err.message}; it is checked again next time.` }
}

/** mailauth asks for the same names once per source: one check asks DNS once per name and type. */
function memoized (dns: HealthDns): HealthDns {
  const seen = new Map<string, Promise<unknown>>()
  return {
    ...dns,
    raw: async (name, rrtype) => {
      const key = `${rrtype} ${name.toLowerCase()}`
      let p = seen.get(key)
      if (p === undefined) seen.set(key, p = dns.raw(name, rrtype))
      return structuredClone(await p)
    }
  }
}

async function published (dns: HealthDns, r: ShownRecord): Promise<string[]> {
  if (r.type === 'MX') return await dns.mx(r.name)
  if (r.type === 'CNAME') return await dns.cname(r.name)
  if (r.type === 'A') return await dns.a(r.name)
  return await dns.txt(r.name)
}

/**
 * Which item a requested record is: SPF of the domain or of a return-path host (`bounces.<domain>` or the domain's
 * own), DKIM, DMARC, a return-path MX, the tracking host's CNAME, or another record.
 */
function checkOf (domain: DomainRecord, r: ShownRecord): Item['check'] {
  const spfRecord = r.type === 'TXT' && r.value.startsWith('v=spf1')
  if (spfRecord) return r.name === domain.name ? 'spf' : 'return_path_spf'
  if (r.type === 'TXT' && r.value.startsWith('v=DKIM1')) return 'dkim'
  if (r.type === 'TXT' && r.name === `_dmarc.${domain.name}`) return 'dmarc'
  if (r.type === 'MX' && (r.name === returnPathDomain(domain.name) || r.name === domain.return_path?.host)) return 'return_path_mx'
  if (r.type === 'CNAME' && r.name === domain.tracking?.host) return 'tracking_cname'
  return 'record'
}

/** The DKIM records of keys that sign now: missing, they fail DKIM at once (the others only once they would sign). */
function signingDkimNames (d: DomainRecord): Set<string> {
  const names = new Set([dkimRecordName(d.name, d.dkim_selector)])
  if (d.dkim_ed25519 !== undefined && d.dkim_ed25519_verified_at !== undefined) names.add(dkimRecordName(d.name, d.dkim_ed25519.selector))
  return names
}

const MISSING: Record<Item['check'], (r: ShownRecord) => string> = {
  spf: (r) => `No SPF record at ${r.name} has this installation's mechanism: publish ${r.value}`,
  return_path_spf: (r) => `No SPF record at ${r.name} (the return path, which receivers check SPF for) has this installation's ` +
    `mechanism: publish ${r.value}`,
  dkim: (r) => `The DKIM record at ${r.name} is missing: receivers cannot verify mail signed with this key. Publish ${r.value}`,
  dmarc: (r) => `No DMARC record at ${r.name}: Gmail and Yahoo require one of bulk senders. Publish ${r.value}`,
  return_path_mx: (r) => `No MX record ${r.value} at ${r.name}: bounces that arrive later do not reach Outbox.`,
  tracking_cname: (r) => `The CNAME record ${r.name} → ${r.value} is missing: links on this tracking host do not reach Outbox.`,
  mta_sts: (r) => `${r.name} is missing.`,
  tls_rpt: (r) => `${r.name} is missing.`,
  reverse_dns: (r) => `${r.name} is missing.`,
  blocklist: (r) => `${r.name} is missing.`,
  record: (r) => `The ${r.type} record ${r.name} (${r.value}) is missing.`
}

/** The DMARC item: one record, with a policy (`p=`), whatever policy it is. */
async function dmarcItem (dns: HealthDns, domain: DomainRecord, expected: ShownRecord | undefined): Promise<Item> {
  const subject = `_dmarc.${domain.name}`
  const item = (status: Item['status'], message: string): Item => ({ check: 'dmarc', subject, status, message })
  let records: string[]
  try {
    records = (await dns.txt(subject)).filter((t) => /^v=DMARC1\s*(;|$)/i.test(t.trim()))
  } catch (err) {
    return notChecked('dmarc', subject, err)
  }
  if (records.length === 0) {
    return item('error', MISSING.dmarc(expected ?? { type: 'TXT', name: subject, value: 'v=DMARC1; p=none', verified: false }))
  }
  if (records.length > 1) return item('error', `${subject} has ${records.length} DMARC records: receivers apply none of them.`)
  const policy = /(?:^|;)\s*p\s*=\s*([a-z]+)/i.exec(records[0]!)?.[1]?.toLowerCase()
  if (policy === undefined || !['none', 'quarantine', 'reject'].includes(policy)) {
    return item('error', `The DMARC record at ${subject} has no valid policy (p=none, quarantine or reject): receivers ignore it.`)
  }
  const meaning = policy === 'none' ? 'receivers report failing mail but deliver it as usual' : `receivers ${policy} mail that fails DMARC`
  return item('ok', `DMARC policy ${policy}: ${meaning}.`)
}

/** MTA-STS and TLS-RPT are reported for presence: they protect mail sent to the domain, not mail it sends. */
async function presenceItem (dns: HealthDns, check: 'mta_sts' | 'tls_rpt', subject: string): Promise<Item> {
  const [prefix, label] = check === 'mta_sts' ? ['v=STSv1', 'MTA-STS policy'] : ['v=TLSRPTv1', 'TLS-RPT record']
  let records: string[]
  try {
    records = (await dns.txt(subject)).filter((t) => t.trim().startsWith(prefix))
  } catch (err) {
    return notChecked(check, subject, err)
  }
  if (records.length === 0) return { check, subject, status: 'ok', message: `No ${label} is published at ${subject} (optional).` }
  if (records.length > 1) {
    return { check, subject, status: 'warning', message: `${subject} has ${records.length} ${label}s: receivers use none.` }
  }
  const wanted = check === 'mta_sts' ? /;\s*id=\w/ : /;\s*rua=\S/
  if (!wanted.test(records[0]!)) {
    return { check, subject, status: 'warning', message: `The ${label} at ${subject} lacks ${check === 'mta_sts' ? 'id=' : 'rua='}.` }
  }
  return { check, subject, status: 'ok', message: `A ${label} is published at ${subject}.` }
}

async function recordItem (
  dns: HealthDns, domain: DomainRecord, r: ShownRecord, sources: readonly HealthSource[] | undefined, signing: Set<string>
): Promise<Item> {
  const check = checkOf(domain, r)
  const item = (status: Item['status'], message: string): Item => ({ check, subject: r.name, status, message })
  if (r.value === '') return item('not_checked', r.warning ?? `Nothing to look up at ${r.name}.`)
  if ((check === 'spf' || check === 'return_path_spf') && sources !== undefined) {
    // where the sources are known, what counts is whether SPF passes for them, however the record names them
    const coverage = await spfCoverage(dns, r.name, sources)
    if (coverage !== undefined) {
      return item(coverage.status, coverage.status === 'error' ? `${coverage.message} Publish ${r.value}` : coverage.message)
    }
    const addresses = sources.map((s) => s.address).join(', ')
    return item('ok', `SPF of ${r.name} passes for every source this domain's mail leaves from (${addresses}).`)
  }
  let ok: boolean
  try {
    ok = found(r, await published(dns, r))
  } catch (err) {
    return notChecked(check, r.name, err)
  }
  if (!ok) {
    // a replaced key still listed, or a new one waiting: nothing signs with it now
    const mild = (check === 'dkim' && !signing.has(r.name)) || check === 'return_path_mx' || check === 'record'
    const status = mild ? 'warning' : 'error'
    return item(status, MISSING[check](r))
  }
  return item('ok', `${r.type} ${r.name} is published as asked.`)
}

/** Checks one domain now. `zones`: the DNS blocklists asked about each source (OB_DNSBL_ZONES). */
export async function checkDomainHealth (
  deps: HealthCheckDeps, domain: DomainRecord, zones: readonly string[], now = new Date()
): Promise<DomainHealth> {
  const dns = memoized(deps.dns)
  const expected = requestedRecords(deps.config, domain, spfPolicy(deps.config, deps.cp.egress), now.getTime())
  const egress = domainSources(deps.cp, deps.config, domain)
  const sources = 'sources' in egress ? egress.sources : undefined
  const signing = signingDkimNames(domain)
  const dmarcExpected = expected.find((r) => checkOf(domain, r) === 'dmarc')
  const recordItems = Promise.all(expected.filter((r) => r !== dmarcExpected)
    .map(async (r) => await recordItem(dns, domain, r, sources, signing)))
  const extra: Array<Promise<Item>> = [
    dmarcItem(dns, domain, dmarcExpected),
    presenceItem(dns, 'mta_sts', `_mta-sts.${domain.name}`),
    presenceItem(dns, 'tls_rpt', `_smtp._tls.${domain.name}`)
  ]
  if (domain.tracking === undefined) {
    extra.push(Promise.resolve<Item>({
      check: 'tracking_cname', subject: domain.name, status: 'not_checked', message: 'No custom tracking domain is set for this domain.'
    }))
  }
  if (sources === undefined) {
    const message = (egress as { unknown: string }).unknown
    extra.push(Promise.resolve<Item>({ check: 'reverse_dns', subject: 'host', status: 'not_checked', message }))
    extra.push(Promise.resolve<Item>({ check: 'blocklist', subject: 'host', status: 'not_checked', message }))
  } else {
    for (const s of sources) extra.push(reverseDnsItem(dns, s), blocklistItem(dns, s, zones))
  }
  const items = [...await recordItems, ...await Promise.all(extra)]
  return { domain_id: domain.id, domain: domain.name, status: overallStatus(items), checked_at: now.toISOString(), items }
}
