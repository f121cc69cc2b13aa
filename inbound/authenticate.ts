import { Resolver } from 'node:dns/promises'
import { authenticate } from 'mailauth'
import type { AuthResult, InboundJob, InboundReceivedData } from '../protocol/mod.ts'

export type { AuthResult }
export type Authentication = NonNullable<InboundReceivedData['authentication']>

const RESULTS = new Set<string>(['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror'])
const DNS_TIMEOUT_MS = 3000

function normalise (value: unknown): AuthResult {
  const v = typeof value === 'string' ? value.toLowerCase() : 'none'
  if (v === 'policy') return 'fail'
  return RESULTS.has(v) ? v as AuthResult : 'none'
}

export type DnsResolve = (name: string, rrtype: string) => Promise<unknown>

/**
 * Answers (and "no such name / no such record") are kept this long. Mail comes in bursts from the same senders,
 * each message costing SPF and DMARC look-ups of the same few names; the limit stays well under the TTLs such
 * records are published with. Failures (timeouts, SERVFAIL) are not kept.
 */
export const DNS_CACHE_MS = 60_000
const DNS_CACHE_ENTRIES = 5_000
const CACHED_FAILURES = new Set(['ENOTFOUND', 'ENODATA'])

/** A DNS resolve function on the configured servers (`OB_DNS_SERVERS`), else the system's, with a small cache. */
export function dnsResolver (servers: readonly string[], cacheMs = DNS_CACHE_MS): DnsResolve {
  const r = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: 2 })
  if (servers.length > 0) r.setServers([...servers])
  // One entry per name and type, holding the look-up itself, so concurrent messages share one query.
  const cache = new Map<string, { until: number, answer: Promise<unknown> }>()
  return async (name, rrtype) => {
    const key = `${rrtype} ${name.toLowerCase()}`
    const now = Date.now()
    let hit = cache.get(key)
    if (hit === undefined || hit.until <= now) {
      if (hit !== undefined) cache.delete(key)
      if (cache.size >= DNS_CACHE_ENTRIES) cache.delete(cache.keys().next().value!)
      const answer = r.resolve(name, rrtype as 'TXT')
      hit = { until: now + cacheMs, answer }
      cache.set(key, hit)
      answer.catch((err: { code?: string }) => {
        if (!CACHED_FAILURES.has(err.code ?? '') && cache.get(key)?.answer === answer) cache.delete(key)
      })
    }
    // A copy: callers may change what they are given.
    return structuredClone(await hit.answer)
  }
}

/**
 * SPF (envelope sender and client IP), DKIM (every signature; one passing signature is a pass) and DMARC for a
 * received message, through mailauth. ARC and BIMI are skipped: neither changes what we report.
 */
export async function checkAuthentication (raw: Buffer, job: InboundJob, resolver: DnsResolve, mta: string): Promise<Authentication> {
  const res = await authenticate(raw, {
    ip: job.remote_ip,
    helo: job.helo,
    sender: job.mail_from,
    mta,
    resolver,
    disableArc: true,
    disableBimi: true
  } as Parameters<typeof authenticate>[1])
  const dkimRows = (res.dkim?.results ?? []) as Array<{ status?: { result?: string, comment?: string | false } }>
  // mailauth reports a body-hash mismatch as "neutral"; RFC 6376 §6.1.3 makes it a failed signature (RFC 8601
  // "fail"), which is what a user checking for tampering needs to see.
  const dkimResults = dkimRows.map((r) => r.status?.comment === 'body hash did not verify' ? 'fail' : normalise(r.status?.result))
  const dkim: AuthResult = dkimResults.length === 0 ? 'none' : dkimResults.includes('pass') ? 'pass' : dkimResults[0]!
  const dmarc = res.dmarc === false || res.dmarc === undefined
    ? 'none'
    : normalise((res.dmarc as { status?: { result?: string } }).status?.result)
  return { spf: normalise((res.spf as { status?: { result?: string } } | false | undefined || undefined)?.status?.result), dkim, dmarc }
}
