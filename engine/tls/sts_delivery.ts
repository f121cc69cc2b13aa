import type { Destination } from '../actor/transports.ts'
import type { TlsCounterBatch, TlsPolicyRef } from '../../stores/tls_reports/mod.ts'
import { TLS_FAILURE_TEXT, type TlsResultType } from './outbound_tls.ts'
import { mxMatches, type StsMode } from './sts_policy.ts'
import type { StsLookup, StsPolicies } from './sts_policies.ts'

/**
 * What a recipient domain's MTA-STS policy (RFC 8461 §5) does to the MX hosts about to be tried, in the shard's
 * thread, and what is counted for its TLS reports (RFC 8460):
 * - no policy, or mode `none`: the hosts as they are, opportunistic TLS, nothing counted;
 * - `enforce`: only the hosts matching the policy's `mx` patterns, each over TLS with a certificate that verifies
 *   for the host's name; none matching, or every matching host failing TLS, defers the recipient with the reason;
 * - `testing`: the hosts as they are; a matching one is tried verified first and, when its TLS fails, again as
 *   without a policy; a failure is only counted and reported.
 * A host that does not match is a counted failure only when no host of the domain matches: a non-matching backup
 * host beside matching ones is not one.
 * A policy that could not be fetched is delivered as without one and counted as a failure of its kind.
 */
export interface StsPlan {
  domain: string
  mode?: StsMode
  policy?: TlsPolicyRef
  dests: Destination[]
  /** Every host was left out by an `enforce` policy: the deferral's reason. */
  blocked?: string
  /** `testing`: hosts that get a second, unverified try when their verified one fails TLS. */
  fallback: Set<Destination>
}

const FAILED_POLICY: TlsPolicyRef = { type: 'sts', strings: [], mx: [] }

export class StsDelivery {
  constructor (private readonly policies: StsPolicies, private readonly counters: TlsCounterBatch) {}

  /** Starts the policy look-up (from the cache almost always), to await beside the MX look-up. */
  async lookup (domain: string): Promise<StsLookup> {
    return await this.policies.lookup(domain)
  }

  plan (domain: string, sts: StsLookup, dests: Destination[]): StsPlan {
    const fallback = new Set<Destination>()
    if (sts.kind === 'none') return { domain, dests, fallback }
    if (sts.kind === 'failed') {
      for (const d of dests.slice(0, 1)) this.fail(domain, FAILED_POLICY, d, sts.type, sts.reason)
      return { domain, dests, fallback }
    }
    const p = sts.policy
    if (p.mode === 'none') return { domain, dests, fallback }
    const policy: TlsPolicyRef = { type: 'sts', strings: p.lines, mx: p.mx }
    const out: Destination[] = []
    const mismatched: string[] = []
    for (const d of dests) {
      if (mxMatches(d.host, p.mx)) {
        const verified = { ...d, tlsVerify: true }
        out.push(verified)
        if (p.mode === 'testing') fallback.add(verified)
      } else {
        mismatched.push(d.host)
        if (p.mode === 'testing') out.push(d)
      }
    }
    // a non-matching host beside matching ones is simply not used; none matching is the domain's failure, once
    if (mismatched.length === dests.length && dests.length > 0) {
      this.fail(domain, policy, dests[0]!, 'validation-failure', 'MX host does not match the MTA-STS policy')
    }
    const plan: StsPlan = { domain, mode: p.mode, policy, dests: out, fallback }
    if (out.length === 0) {
      plan.blocked = `MTA-STS policy of ${domain} (enforce) allows MX hosts ${p.mx.join(', ')}; ` +
        `${mismatched.join(', ')} ${mismatched.length === 1 ? 'does' : 'do'} not match: not sent`
    }
    return plan
  }

  /** A message accepted over a verified TLS session with a host of the plan's policy. */
  ok (plan: StsPlan, dest: Destination): void {
    if (plan.policy !== undefined && dest.tlsVerify === true) this.counters.note(plan.domain, plan.policy, undefined)
  }

  /** A verified TLS session that failed: counted, and the reason an `enforce` deferral gives. */
  failed (plan: StsPlan, dest: Destination, type: TlsResultType, detail: string): string {
    this.fail(plan.domain, plan.policy ?? FAILED_POLICY, dest, type, detail)
    return `MTA-STS policy of ${plan.domain} (${plan.mode ?? 'enforce'}) requires TLS with a valid certificate for ${dest.host}: ` +
      `${TLS_FAILURE_TEXT[type]} (${detail}); not sent in clear`
  }

  private fail (domain: string, policy: TlsPolicyRef, d: Destination, type: TlsResultType, info: string): void {
    this.counters.note(domain, policy, {
      'result-type': type,
      ...(d.localAddress !== undefined ? { 'sending-mta-ip': d.localAddress } : {}),
      'receiving-mx-hostname': d.host,
      'receiving-ip': d.connectTo,
      'failure-reason-code': info.slice(0, 200)
    })
  }
}
