import { Type } from 'typebox'
import { HEALTH_CHECKS, HEALTH_STATUSES } from '../../protocol/mod.ts'

const Status = Type.Enum([...HEALTH_STATUSES], {
  description: 'ok; warning (works, but a receiver may judge it); error (mail fails a check at receivers); ' +
    'not_checked (a look-up failed or there is nothing to look up)'
})

export const HealthItemView = Type.Object({
  check: Type.Enum([...HEALTH_CHECKS], { description: 'What the item looks at (docs/domain-health.md)' }),
  subject: Type.String({ description: 'The DNS name looked up, or the egress source\'s address (reverse_dns, blocklist)' }),
  status: Status,
  message: Type.String({ description: 'What was found, and what to do about it' })
})

export const DomainHealthView = Type.Object({
  domain_id: Type.String(),
  domain: Type.String(),
  status: Type.Enum([...HEALTH_STATUSES], { description: 'The worst item\'s status; not_checked only when no item could be checked' }),
  checked_at: Type.String({ description: 'When the look-ups were made (answers are reused for up to a minute)' }),
  items: Type.Array(HealthItemView)
})
