import { isIPv4, isIPv6 } from 'node:net'
import type { Config } from '../../config/mod.ts'
import { DEFAULT_POOL, type EgressPoolRecord, type EgressSourceRecord } from '../../protocol/mod.ts'

/** What the SPF records need of the egress configuration (stores/control_plane EgressConfig). */
export interface EgressAddresses {
  sources: () => EgressSourceRecord[]
  pool: (name: string) => EgressPoolRecord | undefined
}

/** The SPF value every domain is told to publish now, and a warning when the setting cannot be right as it stands. */
export interface SpfPolicy {
  value: string
  warning?: string
}

export const RELAY_SPF_WARNING = 'Mail leaves through OB_SMTP_RELAY, whose addresses this record does not name: the operator ' +
  'sets OB_SPF=include:<the relay\'s SPF domain> (include:amazonses.com, include:sendgrid.net) and restarts; this record then names it.'

/** The mechanism naming one address or host: `ip4:`/`ip6:` for an address, `a:` for a host name. */
function mechanismOf (hostOrAddress: string): string {
  const bare = hostOrAddress.replace(/^\[(.*)\]$/, '$1')
  if (isIPv4(bare)) return `ip4:${bare}`
  if (isIPv6(bare)) return `ip6:${bare}`
  return `a:${bare}`
}

/**
 * The SPF record of this installation (`OB_SPF`, docs/domains.md#spf). `include:<name>`: that record only.
 * `sources`: the address of every egress source, sorted (mail of any pool may leave from any of them as the operator
 * reassigns pools, and the record must not change with every assignment), and the host of OB_PUBLIC_URL while the
 * pool `default` has no sources: its mail leaves from the host's own address. With no source at all this is the
 * record Outbox always listed.
 */
export function spfPolicy (config: Config, egress: EgressAddresses): SpfPolicy {
  if (config.spf.kind === 'include') return { value: `v=spf1 include:${config.spf.domain} ~all` }
  const mechanisms = [...new Set(egress.sources().map((s) => mechanismOf(s.address)))].sort()
  if ((egress.pool(DEFAULT_POOL)?.sources.length ?? 0) === 0) mechanisms.push(mechanismOf(new URL(config.http.publicUrl).hostname))
  const policy: SpfPolicy = { value: `v=spf1 ${[...new Set(mechanisms)].join(' ')} ~all` }
  if (config.smtp.relay !== undefined) policy.warning = RELAY_SPF_WARNING
  return policy
}

/** The mechanisms of an SPF value, without `v=spf1` and the final `all` qualifier. */
export function spfMechanisms (value: string): string[] {
  return value.trim().split(/\s+/).slice(1).filter((m) => !/^[-~?+]?all$/i.test(m))
}
