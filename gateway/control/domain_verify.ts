import { Resolver } from 'node:dns/promises'
import type { Config } from '../../config/mod.ts'
import { ApiError, DOMAIN_HOST_KINDS, type DomainHostKind, type DomainRecord } from '../../protocol/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'
import { returnPathDomain, requestedRecords, SPF_CHANGED_WARNING, type ShownRecord } from './domains.ts'
import { spfMechanisms, spfPolicy, type SpfPolicy } from './spf.ts'
import { applyDkimCheck, dkimRecordName, ensureEd25519 } from './dkim_keys.ts'
import { claimStatus, lapsedClaim, takeDomainName } from './domain_claims.ts'

export type RecordStatus = 'verified' | 'missing'
export type CheckedRecord = ShownRecord & { status: RecordStatus }

const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'ESERVFAIL', 'EREFUSED'])
const LOOKUP_TIMEOUT_MS = 2000

function resolverFor (config: Config): Resolver {
  const r = new Resolver({ timeout: LOOKUP_TIMEOUT_MS, tries: 2 })
  if (config.dnsServers.length > 0) r.setServers([...config.dnsServers])
  return r
}

function lookupFailed (name: string, err: unknown): ApiError {
  const code = (err as NodeJS.ErrnoException).code ?? 'error'
  return new ApiError('service_unavailable', `DNS look-up of ${name} failed (${code}); retry shortly.`, { cause: err, retryAfter: 5 })
}

async function txt (resolver: Resolver, name: string): Promise<string[]> {
  try {
    return (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''))
  } catch (err) {
    if (NOT_FOUND.has((err as NodeJS.ErrnoException).code ?? '')) return []
    throw lookupFailed(name, err)
  }
}

async function cname (resolver: Resolver, name: string): Promise<string[]> {
  try {
    return (await resolver.resolveCname(name)).map((c) => c.replace(/\.$/, '').toLowerCase())
  } catch (err) {
    if (NOT_FOUND.has((err as NodeJS.ErrnoException).code ?? '')) return []
    throw lookupFailed(name, err)
  }
}

async function mx (resolver: Resolver, name: string): Promise<string[]> {
  try {
    return (await resolver.resolveMx(name)).map((m) => `${m.priority} ${m.exchange.replace(/\.$/, '')}`.toLowerCase())
  } catch (err) {
    if (NOT_FOUND.has((err as NodeJS.ErrnoException).code ?? '')) return []
    throw lookupFailed(name, err)
  }
}

function withoutWarning (r: CheckedRecord): CheckedRecord {
  const copy = { ...r }
  delete copy.warning
  return copy
}

const squash = (s: string): string => s.replace(/\s+/g, '')

/** Whether one published record satisfies what we asked the owner to publish. */
export function found (expected: DomainRecord['records'][number], published: string[]): boolean {
  if (expected.type === 'MX' || expected.type === 'CNAME') return published.includes(expected.value.toLowerCase())
  if (expected.value.startsWith('v=DKIM1')) {
    const key = /p=([^;\s]+)/.exec(expected.value)?.[1] ?? ''
    return published.some((p) => squash(p).includes(`p=${key}`))
  }
  if (expected.value.startsWith('v=spf1')) {
    // The owner may merge our mechanisms into an SPF record they already have; every one of them must be there.
    const wanted = spfMechanisms(expected.value).map((m) => m.toLowerCase())
    return published.some((p) => {
      const has = new Set(spfMechanisms(p).map((m) => m.toLowerCase()))
      return /^v=spf1(\s|$)/i.test(p.trim()) && wanted.every((m) => has.has(m))
    })
  }
  if (expected.value.startsWith('v=DMARC1')) return published.some((p) => /^v=DMARC1\s*;/i.test(p.trim()))
  return published.includes(expected.value)
}

/**
 * SPF (for the domain and for its default return-path domain) and the signing RSA key's DKIM record decide the
 * status; MX and DMARC are optional, the other DKIM records only decide when their keys sign, and the records of the
 * domain's own hosts decide only whether that host is used (hostsFound).
 */
function required (domain: DomainRecord, r: { type: string, name: string, value: string }): boolean {
  const signingKey = r.value.startsWith('v=DKIM1') && r.name === dkimRecordName(domain.name, domain.dkim_selector)
  const spf = r.value.startsWith('v=spf1') && (r.name === domain.name || r.name === returnPathDomain(domain.name))
  return r.type === 'TXT' && (spf || signingKey)
}

/** The domain's own hosts whose every record was found (an MX without a value, no OB_MX_HOST, is not asked for). */
export function hostsFound (domain: DomainRecord, records: readonly CheckedRecord[]): Set<DomainHostKind> {
  const out = new Set<DomainHostKind>()
  for (const kind of DOMAIN_HOST_KINDS) {
    const host = domain[kind]?.host
    if (host === undefined) continue
    const own = records.filter((r) => r.name === host && !(r.type === 'MX' && r.value === ''))
    if (own.length > 0 && own.every((r) => r.status === 'verified')) out.add(kind)
  }
  return out
}

async function lookUp (resolver: Resolver, r: ShownRecord): Promise<string[]> {
  if (r.type === 'MX') return await mx(resolver, r.name)
  if (r.type === 'CNAME') return await cname(resolver, r.name)
  return await txt(resolver, r.name)
}

/** Looks each record up through `OB_DNS_SERVERS` (or the system resolvers). */
export async function checkDnsRecords (
  config: Config, domain: DomainRecord, spf: SpfPolicy
): Promise<{ records: CheckedRecord[], verified: boolean }> {
  const resolver = resolverFor(config)
  const records = await Promise.all(requestedRecords(config, domain, spf).map(async (r): Promise<CheckedRecord> => {
    // A record without a value (no MX host configured) has nothing to look for.
    const ok = r.value !== '' && found(r, await lookUp(resolver, r))
    return { ...r, verified: ok, status: ok ? 'verified' : 'missing' }
  }))
  const decisive = records.filter((r) => required(domain, r))
  return { records, verified: decisive.length > 0 && decisive.every((r) => r.status === 'verified') }
}

/**
 * `OB_DOMAIN_VERIFICATION=off` marks the domain verified; `dns` checks DNS. A verified domain stays
 * verified when a later check misses a record: the answer still shows which records are missing. A claim that
 * lapsed (another organisation verified the name first) is 409 without a look-up; the first claim to pass takes
 * the name before it is marked verified.
 */
export async function verifyDomain (
  cp: ControlPlane, config: Config, claimed: DomainRecord
): Promise<{ domain: DomainRecord, records: CheckedRecord[] }> {
  if (claimStatus(cp, claimed) === 'lapsed') throw lapsedClaim(claimed)
  const domain = await ensureEd25519(cp, claimed)
  const spf = spfPolicy(config, cp.egress)
  let records: CheckedRecord[]
  let verified: boolean
  if (config.domainVerification === 'off') {
    records = requestedRecords(config, domain, spf)
      .map((r) => ({ ...r, verified: r.value !== '', status: r.value !== '' ? 'verified' : 'missing' }))
    verified = true
  } else {
    ({ records, verified } = await checkDnsRecords(config, domain, spf))
  }
  // A warning the check settled (the record is now found with today's value) is not shown again.
  records = records.map((r) => r.status === 'verified' && r.warning === SPF_CHANGED_WARNING ? withoutWarning(r) : r)
  const hosts = hostsFound(domain, records)
  if (verified && domain.status !== 'verified') await takeDomainName(cp, domain)
  // Each record keeps the result of this check, so listing the domain shows which records are published. The
  // DKIM records besides the signing RSA key's are listed from the key state (requestedRecords); stored, they only
  // carry their last result.
  const stored = records
    .filter((r) => r.listed_until === undefined)
    .map((r) => ({ type: r.type, name: r.name, value: r.value, verified: r.verified }))
  const at = new Date().toISOString()
  let current = (await cp.domains.modify(`${domain.org_id}.${domain.id}`, (d) => {
    const next = { ...d, records: stored }
    if (verified && d.status !== 'verified') Object.assign(next, { status: 'verified', verified_at: at })
    // A host found once stays in use, as a verified domain stays verified; only the host checked here is stamped.
    for (const kind of hosts) {
      const chosen = d[kind]
      if (chosen !== undefined && chosen.host === domain[kind]?.host && chosen.verified_at === undefined) {
        next[kind] = { ...chosen, verified_at: at }
      }
    }
    return JSON.stringify(next) === JSON.stringify(d) ? undefined : next
  })) ?? domain
  // DKIM keys start signing once their records are found: never one whose record receivers cannot look up
  const published = new Set(records.filter((r) => r.status === 'verified').map((r) => `${r.name}\n${r.value}`))
  const now = new Date()
  if (applyDkimCheck(current, published, now) !== undefined) {
    current = (await cp.domains.modify(`${domain.org_id}.${domain.id}`, (d) => applyDkimCheck(d, published, now))) ?? current
  }
  return { domain: current, records }
}
