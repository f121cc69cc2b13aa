/**
 * A sending domain's health as `GET /v1/domains/{id}/health` and the `domain.health_changed` event show it, and the
 * pure rules behind it: how items add up to one status, when a check is worse than the one before, and what a DNS
 * blocklist's answer means. No I/O here (gateway/control/domain_health.ts does the look-ups).
 */

export const HEALTH_STATUSES = ['ok', 'warning', 'error', 'not_checked'] as const
export type HealthStatus = (typeof HEALTH_STATUSES)[number]

/** What each item looks at (docs/domain-health.md lists them). */
export const HEALTH_CHECKS = [
  'spf', 'dkim', 'dmarc', 'return_path_spf', 'return_path_mx', 'tracking_cname', 'mta_sts', 'tls_rpt', 'reverse_dns',
  'blocklist', 'record'
] as const
export type HealthCheck = (typeof HEALTH_CHECKS)[number]

/** One item: `subject` is the DNS name looked up, or the egress source's address for reverse DNS and blocklists. */
export type HealthItem = {
  check: HealthCheck
  subject: string
  status: HealthStatus
  message: string
}

export interface DomainHealth {
  domain_id: string
  domain: string
  /** The worst item's status; `not_checked` only when no item could be checked. */
  status: HealthStatus
  checked_at: string
  items: HealthItem[]
}

/** `domain.health_changed` data: the items that got worse since the check before. */
export type HealthChangedData = {
  domain_id: string
  domain: string
  status: HealthStatus
  previous_status: HealthStatus
  checked_at: string
  worsened: Array<HealthItem & { previous_status: HealthStatus | null }>
}

const RANK: Record<Exclude<HealthStatus, 'not_checked'>, number> = { ok: 0, warning: 1, error: 2 }

/** The worst checked status of the items; `not_checked` when none was checked. */
export function overallStatus (items: readonly HealthItem[]): HealthStatus {
  let worst: HealthStatus = 'not_checked'
  for (const i of items) {
    if (i.status === 'not_checked') continue
    if (worst === 'not_checked' || RANK[i.status] > RANK[worst]) worst = i.status
  }
  return worst
}

export const itemKey = (i: Pick<HealthItem, 'check' | 'subject'>): string => `${i.check}|${i.subject}`

/** What the periodic check keeps of a check to compare the next one with: item key → status. */
export type HealthSnapshot = Record<string, Exclude<HealthStatus, 'not_checked'>>

/**
 * The snapshot after `items`: an item that could not be checked this time keeps its status from `previous` (a DNS
 * server that times out once says nothing about the domain), so it can neither get worse nor better by it.
 */
export function nextSnapshot (previous: HealthSnapshot | undefined, items: readonly HealthItem[]): HealthSnapshot {
  const out: HealthSnapshot = {}
  for (const i of items) {
    const k = itemKey(i)
    if (i.status !== 'not_checked') out[k] = i.status
    else if (previous?.[k] !== undefined) out[k] = previous[k]
  }
  return out
}

/**
 * The items that are worse than in `previous`: a warning or error where the item was ok (or a warning and is now an
 * error), or a warning or error on an item the previous check did not have (a new egress source, a new record).
 * Nothing is worse than a first check: it sets the baseline.
 */
export function worsenedItems (previous: HealthSnapshot | undefined, items: readonly HealthItem[]): HealthChangedData['worsened'] {
  if (previous === undefined) return []
  const out: HealthChangedData['worsened'] = []
  for (const i of items) {
    if (i.status === 'not_checked' || i.status === 'ok') continue
    const before = previous[itemKey(i)]
    if (before === undefined || RANK[i.status] > RANK[before]) out.push({ ...i, previous_status: before ?? null })
  }
  return out
}

/** The worst status a snapshot holds (for `previous_status`). */
export function snapshotStatus (s: HealthSnapshot): HealthStatus {
  const values = Object.values(s)
  if (values.length === 0) return 'not_checked'
  return values.reduce((a, b) => (RANK[b] > RANK[a] ? b : a), 'ok' as Exclude<HealthStatus, 'not_checked'>)
}

/** The 32 hexadecimal nibbles of an IPv6 literal in hex groups (`::` standing for the zero groups left out). */
function ipv6Nibbles (address: string): string {
  const [head, tail] = address.includes('::') ? address.split('::') as [string, string] : [address, undefined]
  const h = head === '' ? [] : head.split(':')
  const t = tail === undefined || tail === '' ? [] : tail.split(':')
  const groups = tail === undefined ? h : [...h, ...new Array<string>(8 - h.length - t.length).fill('0'), ...t]
  return groups.map((g) => g.padStart(4, '0').toLowerCase()).join('')
}

/** One spelling per address, to compare a source's address with DNS answers (`2001:db8::1` = `2001:0db8:0:0::1`). */
export function expandAddress (address: string): string {
  return address.includes(':') ? ipv6Nibbles(address) : address
}

/** The name a DNS blocklist is asked for an address: its octets (IPv4) or nibbles (IPv6) reversed, then the zone. */
export function dnsblQueryName (address: string, zone: string): string {
  if (address.includes(':')) return `${ipv6Nibbles(address).split('').reverse().join('.')}.${zone}`
  return `${address.split('.').reverse().join('.')}.${zone}`
}

/**
 * What a blocklist's A records for an address mean. By the convention of DNS blocklists (RFC 5782 §2.1) an answer
 * in 127.0.0.0/8 lists the address; Spamhaus answers 127.255.255.x when it refuses the query (a public resolver,
 * too many queries), which says nothing about the address. Any other answer is not a blocklist's (a resolver that
 * rewrites "no such name"), so it is not counted either.
 */
export function dnsblVerdict (answers: readonly string[]): { listed: true, codes: string[] } | { listed: false, refused: boolean } {
  if (answers.length === 0) return { listed: false, refused: false }
  const codes = answers.filter((a) => a.startsWith('127.') && !a.startsWith('127.255.255.'))
  if (codes.length > 0) return { listed: true, codes }
  return { listed: false, refused: true }
}
