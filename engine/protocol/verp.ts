import { sha256Hex } from './ids.ts'

/**
 * VERP return paths: `bounces+<msg_id>-<hash>@bounces.<domain>`, where `<hash>` is the first 10 hex digits of
 * SHA-256 over the lower-cased recipient. A bounce names the message in its address; the hash ties it to one
 * recipient without putting the address itself (or anything guessable) on the wire.
 */
export const VERP_LOCAL_PREFIX = 'bounces+'
export const VERP_SUBDOMAIN = 'bounces.'
const HASH_HEX = 10
const LOCAL = /^bounces\+(msg_[0-9a-z]{26})-([0-9a-f]{10})$/

export interface VerpAddress {
  messageId: string
  recipientHash: string
  /** The sending domain (without the `bounces.` label). */
  domain: string
}

export function recipientHash (recipient: string): string {
  return sha256Hex(recipient.trim().toLowerCase()).slice(0, HASH_HEX)
}

export function encodeVerp (messageId: string, recipient: string, domain: string): string {
  return `${VERP_LOCAL_PREFIX}${messageId}-${recipientHash(recipient)}@${VERP_SUBDOMAIN}${domain.toLowerCase()}`
}

/** Parses a VERP address (case-insensitively); undefined for anything else. */
export function decodeVerp (address: string): VerpAddress | undefined {
  const at = address.lastIndexOf('@')
  if (at <= 0) return undefined
  const local = address.slice(0, at).toLowerCase()
  const host = address.slice(at + 1).toLowerCase()
  const m = LOCAL.exec(local)
  if (m === null || !host.startsWith(VERP_SUBDOMAIN) || host.length <= VERP_SUBDOMAIN.length) return undefined
  return { messageId: m[1]!, recipientHash: m[2]!, domain: host.slice(VERP_SUBDOMAIN.length) }
}

/** True when `recipient` is the address the VERP hash was made from. */
export function verpMatches (verp: VerpAddress, recipient: string): boolean {
  return recipientHash(recipient) === verp.recipientHash
}
