import { isIP } from 'node:net'
import { spf } from 'mailauth'
import type { Config } from '../../config/mod.ts'
import {
  DEFAULT_POOL, dnsblQueryName, dnsblVerdict, egressPoolOf, expandAddress, type DomainRecord, type HealthItem
} from '../../protocol/mod.ts'
import type { ControlPlane } from '../../stores/control_plane/mod.ts'
import { LookupFailedError, type HealthDns } from './health_lookups.ts'

/**
 * The health items about the addresses a domain's mail leaves from: whether SPF passes for each of them, their
 * reverse DNS against their EHLO names, and their listings on DNS blocklists.
 */

/** An egress source as the check needs it: its address and the name it says in EHLO. */
export interface HealthSource { address: string, ehlo: string }

/**
 * The sources the domain's mail leaves from, or why the check cannot name them: those of the pool of each stream of
 * its organisation (transactional's is the domain's or organisation's; a broadcast stream may have its own), each
 * source once.
 */
export function domainSources (cp: ControlPlane, config: Config, domain: DomainRecord): { sources: HealthSource[] } | { unknown: string } {
  if (config.smtp.relay !== undefined) {
    return { unknown: 'Mail leaves through the relay (OB_SMTP_RELAY): its addresses are the relay operator\'s to check.' }
  }
  if (!config.smtp.egressShaping) {
    return { unknown: 'Mail leaves from the host\'s own address (OB_EGRESS_SHAPING=off), which Outbox does not know.' }
  }
  const org = cp.orgs.get(domain.org_id) ?? {}
  const names = new Set([egressPoolOf(org, domain), ...cp.streams.list(domain.org_id).map((st) => egressPoolOf(org, domain, st))])
  const byName = new Map<string, HealthSource>()
  for (const name of names) {
    const pool = cp.egress.pool(name) ?? cp.egress.pool(DEFAULT_POOL)
    const sources = (pool?.sources ?? []).map((m) => cp.egress.source(m.source)).filter((s) => s !== undefined)
    if (sources.length === 0) {
      const pooled = pool?.name ?? name
      return { unknown: `The pool ${pooled} has no sources: mail leaves from the host's own address, which Outbox does not know.` }
    }
    for (const s of sources) byName.set(s.name, { address: s.address, ehlo: s.ehlo })
  }
  return { sources: [...byName.values()] }
}

function failed (err: unknown): string {
  if (err instanceof LookupFailedError) return `${err.message}; it is checked again next time.`
  throw err
}

/** mailauth's SPF result for one address and envelope sender; `temperror` when a look-up failed. */
async function spfResult (dns: HealthDns, address: string, ehlo: string, sender: string): Promise<string> {
  try {
    const res = await spf({ ip: address, sender, helo: ehlo, mta: 'outbox-health', resolver: dns.raw as never })
    return String(res.status.result)
  } catch {
    return 'temperror'
  }
}

/**
 * Whether the SPF record of `name` passes for every source (evaluated as a receiver would, through mailauth):
 * undefined when all pass, else the item's status and message.
 */
export async function spfCoverage (
  dns: HealthDns, name: string, sources: readonly HealthSource[]
): Promise<Pick<HealthItem, 'status' | 'message'> | undefined> {
  const results = await Promise.all(sources.map(async (s) => ({
    s, result: await spfResult(dns, s.address, s.ehlo, `postmaster@${name}`)
  })))
  const failing = results.filter((r) => r.result !== 'pass' && r.result !== 'temperror')
  if (failing.length > 0) {
    const list = failing.map((r) => `${r.s.address} (${r.result})`).join(', ')
    return { status: 'error', message: `SPF of ${name} does not pass for ${list}: mail from there fails SPF at receivers.` }
  }
  if (results.some((r) => r.result === 'temperror')) {
    return { status: 'not_checked', message: `SPF of ${name} could not be evaluated for every source (a look-up failed).` }
  }
  return undefined
}

/** Reverse DNS of a source: its PTR must name its EHLO name, and that name must resolve back to the address. */
export async function reverseDnsItem (dns: HealthDns, s: HealthSource): Promise<HealthItem> {
  const item = (status: HealthItem['status'], message: string): HealthItem =>
    ({ check: 'reverse_dns', subject: s.address, status, message })
  try {
    const names = await dns.ptr(s.address)
    if (names.length === 0) {
      return item('error', `${s.address} has no reverse DNS (PTR) record: Gmail, Yahoo and others refuse mail from such addresses. ` +
        `Ask the address's provider for a PTR record naming ${s.ehlo}.`)
    }
    if (!names.includes(s.ehlo)) {
      return item('warning', `The reverse DNS of ${s.address} names ${names.join(', ')}, not its EHLO name ${s.ehlo}.`)
    }
    const forward = isIP(s.address) === 6 ? await dns.aaaa(s.ehlo) : await dns.a(s.ehlo)
    const want = expandAddress(s.address)
    if (!forward.some((a) => expandAddress(a) === want)) {
      return item('warning', `${s.ehlo} does not resolve back to ${s.address}: forward-confirmed reverse DNS fails.`)
    }
    return item('ok', `${s.address} has reverse DNS ${s.ehlo}, which resolves back to it.`)
  } catch (err) {
    return item('not_checked', failed(err))
  }
}

/** The source's listings: listed on any zone is an error; not checked when no zone answered. */
export async function blocklistItem (dns: HealthDns, s: HealthSource, zones: readonly string[]): Promise<HealthItem> {
  const item = (status: HealthItem['status'], message: string): HealthItem =>
    ({ check: 'blocklist', subject: s.address, status, message })
  if (zones.length === 0) return item('not_checked', 'No blocklist zones are configured (OB_DNSBL_ZONES=none).')
  const answers = await Promise.all(zones.map(async (zone) => {
    try {
      return { zone, verdict: dnsblVerdict(await dns.a(dnsblQueryName(s.address, zone))) }
    } catch {
      return { zone, verdict: undefined }
    }
  }))
  const listed = answers.flatMap((a) => a.verdict?.listed === true ? [`${a.zone} (${a.verdict.codes.join(', ')})`] : [])
  if (listed.length > 0) {
    return item('error', `${s.address} is listed on ${listed.join(', ')}: receivers that use these lists refuse or junk its mail.`)
  }
  const answered = answers.filter((a) => a.verdict !== undefined && !(a.verdict.listed === false && a.verdict.refused))
  if (answered.length === 0) return item('not_checked', `No blocklist answered for ${s.address} (${zones.join(', ')}).`)
  return item('ok', `${s.address} is not listed on ${answered.map((a) => a.zone).join(', ')}.`)
}
