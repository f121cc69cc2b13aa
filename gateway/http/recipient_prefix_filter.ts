import { Type } from 'typebox'
import { bareAddress } from '../../protocol/mod.ts'

/**
 * `?to=` on GET /v1/messages: the start of a recipient address (to, cc or bcc), case-insensitive; a whole address
 * matches that address and any longer one it begins. Answered from a lexicographic index, never a scan.
 */
export const RecipientPrefixQuery = {
  to: Type.Optional(Type.String({
    minLength: 1,
    maxLength: 320,
    description: 'Recipient address prefix (to, cc or bcc), case-insensitive; `Name <address>` stands for the address'
  }))
}

export function recipientPrefixFilter (query: URLSearchParams): { to?: string } {
  const to = query.get('to')
  if (to === null || to === '') return {}
  return { to: to.includes('<') ? bareAddress(to) : to.trim().toLowerCase() }
}
