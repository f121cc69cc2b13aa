import { ApiError, type DomainRecord } from '../../protocol/mod.ts'
import { KvConflictError, type ControlPlane } from '../../stores/control_plane/mod.ts'

/**
 * Who owns a domain name. Adding a domain is a claim: any number of organisations may hold a pending claim on
 * the same name, each with its own DKIM key. The first claim to verify takes the name (the `domainNames`
 * entry); from then on the other claims have lapsed, since verifying needs the DKIM record of one claim's own
 * key, which only whoever controls the domain's DNS can publish. This module is the only writer of that entry.
 */

/** What a domain is to the organisation that added it; `lapsed`: another organisation's claim verified first. */
export type ClaimStatus = 'pending' | 'verified' | 'lapsed'

function claimKey (d: DomainRecord): string {
  return `${d.org_id}.${d.id}`
}

/**
 * Derived on every read rather than stored, so it is right whichever process verified the owner and it needs
 * no second write: a pending claim lapses while another claim holds the name, and is pending again if the owner
 * deletes its domain (it can still verify only with its own key published).
 */
export function claimStatus (cp: ControlPlane, d: DomainRecord): ClaimStatus {
  if (d.status === 'verified') return 'verified'
  const owner = cp.domainOwner(d.name)
  return owner !== undefined && owner.id !== d.id ? 'lapsed' : 'pending'
}

export function verifiedElsewhere (name: string, field: string, orgId?: string): ApiError {
  const who = orgId === undefined ? 'an organisation' : 'this organisation'
  return new ApiError('conflict', `The domain ${name} is already verified by ${who}.`, { field })
}

export function lapsedClaim (d: DomainRecord): ApiError {
  return new ApiError(
    'conflict',
    `The domain ${d.name} was verified by another organisation first; this claim has lapsed and can be deleted.`,
    { details: { domain_id: d.id, status: 'lapsed' } }
  )
}

/**
 * A name entry whose claim is still pending after this long was left by a verify that stopped between its two
 * writes, or by a pending domain stored before claims were introduced; a younger one is a verify in progress.
 */
const STALE_NAME_ENTRY_MS = 60_000 // 60 s

/**
 * Makes `d` the owner of its name, before it is marked verified (a verified record always owns its name). The
 * entry is created, or taken over by compare-and-set from a claim that is gone or stale, so of two racing
 * verifies exactly one wins. A name verified by another claim is 409, as is one being verified right now.
 */
export async function takeDomainName (cp: ControlPlane, d: DomainRecord, field = 'name'): Promise<void> {
  const key = claimKey(d)
  for (let attempt = 0; attempt < 5; attempt++) {
    const entry = await cp.domainNames.kv.get(d.name)
    const holder = entry === null || entry.operation !== 'PUT' ? undefined : entry.json<string>()
    if (holder === key) return
    const held = holder === undefined ? undefined : cp.domains.get(holder)
    if (held?.status === 'verified') throw verifiedElsewhere(d.name, field, held.org_id === d.org_id ? d.org_id : undefined)
    if (held !== undefined && Date.now() - entry!.created.getTime() < STALE_NAME_ENTRY_MS) {
      throw new ApiError('conflict', `The domain ${d.name} is being verified by another claim right now.`, { field })
    }
    try {
      if (holder === undefined) await cp.domainNames.create(d.name, key)
      else await cp.domainNames.update(d.name, key, entry!.revision)
      return
    } catch (err) {
      if (!(err instanceof KvConflictError)) throw err
    }
  }
  throw verifiedElsewhere(d.name, field)
}

/** Frees the name when `d` holds it; other claims on it become pending again. */
export async function releaseDomainName (cp: ControlPlane, d: DomainRecord): Promise<void> {
  if (cp.domainNames.get(d.name) === claimKey(d)) await cp.domainNames.delete(d.name)
}
