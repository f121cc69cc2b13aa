import type { DomainRecord } from '../protocol/mod.ts'
import type { DeliverTask } from './actor/task.ts'

/**
 * The keys a delivery signs with: the domain's RSA key always, its ed25519 key only once its DNS record was found
 * (a receiver that cannot look a key up counts the signature as failed). A rotation's pair waiting for its records
 * is left out: the control plane swaps it in when both are found.
 */
export function signingDomain (domain: DomainRecord): DeliverTask['domain'] {
  const out: DeliverTask['domain'] = {
    id: domain.id, name: domain.name, selector: domain.dkim_selector, privateKey: domain.dkim_private_key
  }
  const ed = domain.dkim_ed25519
  if (ed !== undefined && domain.dkim_ed25519_verified_at !== undefined) out.ed25519 = { selector: ed.selector, privateKey: ed.private_key }
  return out
}
