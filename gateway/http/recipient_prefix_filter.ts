import { Type } from 'typebox'

/**
 * `?to=` on GET /v1/messages: the start of a recipient address (to, cc or bcc), case-insensitive; a whole address
 * matches that address and any longer one it begins. Answered from a lexicographic index, never a scan.
 */
export const RecipientPrefixQuery = {
  to: Type.Optional(Type.String({ minLength: 1, maxLength: 254, pattern: '^[^\\s<>]+$', description: 'Recipient address prefix (to, cc or bcc), case-insensitive' }))
}

export function recipientPrefixFilter (query: URLSearchParams): { to?: string } {
  const to = query.get('to')
  return to === null || to === '' ? {} : { to }
}
