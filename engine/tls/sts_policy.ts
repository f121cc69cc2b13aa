/**
 * MTA-STS (RFC 8461) as data: the `_mta-sts` TXT record, the policy file and the MX patterns, parsed and matched by
 * pure functions. What is fetched from the internet is untrusted: every parser answers `undefined` (or a reason)
 * instead of throwing, and keeps no more than the RFC's fields.
 */

export type StsMode = 'enforce' | 'testing' | 'none'

export interface StsPolicy {
  mode: StsMode
  /** Seconds the policy may be cached (RFC 8461 §3.2: at most 31557600, a year). */
  maxAgeS: number
  /** The `mx` patterns, lower case: `mx.example.com` or `*.example.com`. */
  mx: string[]
  /** The policy's lines as fetched (TLS-RPT's `policy-string`, RFC 8460 §4.3). */
  lines: string[]
}

/** RFC 8461 §3.2: max_age is at most 31557600 s. */
export const MAX_MAX_AGE_S = 31_557_600
const ID = /^[A-Za-z0-9]{1,32}$/

/**
 * The policy id of a domain's `_mta-sts` TXT records, undefined when none is a valid STSv1 record. RFC 8461 §3.1:
 * records not starting with `v=STSv1` are ignored, and more than one STSv1 record means no policy.
 */
export function parseStsRecord (records: readonly string[]): string | undefined {
  const sts = records.filter((r) => /^v=STSv1\s*(;|$)/.test(r))
  if (sts.length !== 1) return undefined
  let id: string | undefined
  for (const part of sts[0]!.split(';')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    if (part.slice(0, eq).trim() === 'id') id = part.slice(eq + 1).trim()
  }
  return id !== undefined && ID.test(id) ? id : undefined
}

/** The policy file's fields (RFC 8461 §3.2), or a reason it is not a valid policy. */
export function parseStsPolicy (text: string): StsPolicy | { invalid: string } {
  const lines = text.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== '')
  let version: string | undefined
  let mode: string | undefined
  let maxAge: string | undefined
  const mx: string[] = []
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon < 0) continue
    const key = line.slice(0, colon).trim()
    const value = line.slice(colon + 1).trim()
    if (key === 'version') version ??= value
    else if (key === 'mode') mode ??= value
    else if (key === 'max_age') maxAge ??= value
    else if (key === 'mx') mx.push(value.toLowerCase().replace(/\.$/, ''))
  }
  if (version !== 'STSv1') return { invalid: 'version is not STSv1' }
  if (mode !== 'enforce' && mode !== 'testing' && mode !== 'none') return { invalid: `unknown mode ${JSON.stringify(mode ?? null)}` }
  if (maxAge === undefined || !/^\d{1,10}$/.test(maxAge)) return { invalid: 'max_age missing or not a number' }
  if (mode !== 'none' && mx.length === 0) return { invalid: 'no mx pattern' }
  return { mode, maxAgeS: Math.min(Number(maxAge), MAX_MAX_AGE_S), mx, lines }
}

/**
 * Whether an MX host name matches one of the policy's patterns (RFC 8461 §4.1): equal, case-insensitive, or a
 * pattern `*.example.com` standing for exactly one more label on its left (`mx.example.com`, not `a.mx.example.com`
 * nor `example.com`).
 */
export function mxMatches (host: string, patterns: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/\.$/, '')
  for (const p of patterns) {
    if (p.startsWith('*.')) {
      const dot = h.indexOf('.')
      if (dot > 0 && h.slice(dot + 1) === p.slice(2)) return true
    } else if (h === p) return true
  }
  return false
}
