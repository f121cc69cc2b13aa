import { createHash } from 'node:crypto'

/**
 * VERP return paths: every recipient of every message gets its own envelope sender, so an asynchronous
 * bounce (a DSN sent to the return path days later) names the message and the recipient it is about.
 *
 *   bounces+<message_id>-<rcpt_hash>@bounces.<sending domain>
 *
 * `rcpt_hash` is the first 12 hex digits of SHA-256 over the recipient's bare, lower-cased address; the
 * inbound side matches it against the message's recipients. Message ids are `msg_` + 26 base32 characters.
 */
export const VERP_LOCAL_PREFIX = 'bounces+'
export const VERP_SUBDOMAIN = 'bounces.'
const RCPT_HASH_LENGTH = 12
const LOCAL_PATTERN = /^bounces\+(msg_[0-9a-z]{26})-([0-9a-f]{12})$/

export interface VerpAddress {
  messageId: string
  rcptHash: string
  /** The sending domain (without the `bounces.` label). */
  domain: string
}

export function verpRecipientHash (recipient: string): string {
  return createHash('sha256').update(recipient.trim().toLowerCase()).digest('hex').slice(0, RCPT_HASH_LENGTH)
}

export function encodeVerp (messageId: string, recipient: string, domain: string): string {
  return `${VERP_LOCAL_PREFIX}${messageId}-${verpRecipientHash(recipient)}@${VERP_SUBDOMAIN}${domain.toLowerCase()}`
}

/** The parts of a VERP address, or undefined when `address` is not one (case-insensitive, `<…>` allowed). */
export function decodeVerp (address: string): VerpAddress | undefined {
  const bare = address.trim().replace(/^<(.*)>$/, '$1').toLowerCase()
  const at = bare.lastIndexOf('@')
  if (at <= 0) return undefined
  const local = LOCAL_PATTERN.exec(bare.slice(0, at))
  const host = bare.slice(at + 1)
  if (local === null || !host.startsWith(VERP_SUBDOMAIN) || host.length <= VERP_SUBDOMAIN.length) return undefined
  return { messageId: local[1]!, rcptHash: local[2]!, domain: host.slice(VERP_SUBDOMAIN.length) }
}

/** Which of `recipients` a decoded VERP address is about. */
export function verpRecipient (decoded: VerpAddress, recipients: readonly string[]): string | undefined {
  return recipients.find((r) => verpRecipientHash(r) === decoded.rcptHash)
}

/** True when `recipient` is the address the VERP hash was made from. */
export function verpMatches (verp: VerpAddress, recipient: string): boolean {
  return verpRecipientHash(recipient) === verp.rcptHash
}
