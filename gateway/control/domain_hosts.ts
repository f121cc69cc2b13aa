import {
  ApiError, DOMAIN_HOST_KINDS, domainHostErrors, normalHost, type DomainHostKind, type DomainRecord, type FieldError
} from '../../protocol/mod.ts'
import { type ControlPlane } from '../../stores/control_plane/mod.ts'

/** `PATCH /v1/domains/{id}`: a host for each kind, `null` to go back to the default, absent to leave it. */
export type DomainHostsInput = Partial<Record<`${DomainHostKind}_host`, string | null>>

/**
 * A name between the host and its domain (the host included) that another organisation verified as a sending
 * domain of its own: that organisation's DNS, which this one must not claim a host in.
 */
function ownedByOther (cp: ControlPlane, domain: DomainRecord, host: string): boolean {
  const labels = host.split('.')
  const depth = domain.name.split('.').length
  for (let i = 0; labels.length - i > depth; i++) {
    const owner = cp.domainOwner(labels.slice(i).join('.'))
    if (owner !== undefined && owner.org_id !== domain.org_id) return true
  }
  return false
}

/**
 * Sets or clears the domain's own return-path and tracking hosts. Each must be a host name under the domain (400
 * `validation_error` otherwise: a host outside it would let one customer claim another's names) and in no name
 * another organisation verified (409). A new host starts unverified: mail keeps the default until a verification
 * finds its records (domain_verify.ts); an unchanged host keeps its state.
 */
export async function setDomainHosts (cp: ControlPlane, domain: DomainRecord, input: DomainHostsInput): Promise<DomainRecord> {
  const next: Partial<Record<DomainHostKind, string | null>> = {}
  for (const kind of DOMAIN_HOST_KINDS) {
    const raw = input[`${kind}_host`]
    if (raw !== undefined) next[kind] = raw === null ? null : normalHost(raw)
  }
  const after = (kind: DomainHostKind): string | undefined => {
    const v = next[kind]
    return v === undefined ? domain[kind]?.host : v ?? undefined
  }
  const errors: FieldError[] = []
  for (const kind of DOMAIN_HOST_KINDS) {
    const host = next[kind]
    if (typeof host !== 'string') continue
    errors.push(...domainHostErrors(domain.name, kind, host, after(kind === 'tracking' ? 'return_path' : 'tracking')))
  }
  if (errors.length > 0) throw ApiError.validation(errors)
  for (const kind of DOMAIN_HOST_KINDS) {
    const host = next[kind]
    if (typeof host === 'string' && ownedByOther(cp, domain, host)) {
      throw new ApiError('conflict', `The ${kind.replace('_', '-')} host is in a domain another organisation verified.`, {
        field: `${kind}_host`
      })
    }
  }
  const updated = await cp.domains.modify(`${domain.org_id}.${domain.id}`, (d) => {
    const out: DomainRecord = { ...d }
    for (const kind of DOMAIN_HOST_KINDS) {
      const host = next[kind]
      if (host === null) delete out[kind]
      else if (typeof host === 'string' && d[kind]?.host !== host) out[kind] = { host }
    }
    return JSON.stringify(out) === JSON.stringify(d) ? undefined : out
  })
  return updated ?? domain
}
