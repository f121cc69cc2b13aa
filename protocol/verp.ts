import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * VERP return paths: every recipient of every message gets its own envelope sender, so an asynchronous
 * bounce (a DSN sent to the return path days later) names the message and the recipient it is about.
 *
 *   bounces+<message_id>-<key_id><mac>@bounces.<sending domain>
 *   bounces+<message_id>-<key_id><mac>@<the sending domain's own return-path host> (protocol/domain_hosts.ts)
 *
 * `mac` is HMAC-SHA256 under the return-path key `key_id` over the message id and the recipient's bare,
 * lower-cased address, its first 10 bytes in lower-case Crockford base32 (16 characters). Only the holder of
 * the key can make a tag, so a report to a made-up address names no recipient. The recipient is not in the
 * address: the inbound side finds it among the message's recipients. Message ids are `msg_` + 26 base32
 * characters and key ids 4, so the local part is 59 characters (RFC 5321 allows 64).
 */
export const VERP_LOCAL_PREFIX = 'bounces+'
export const VERP_SUBDOMAIN = 'bounces.'
export const VERP_KEY_ID_LENGTH = 4
const MAC_BYTES = 10
const MAC_CHARS = 16
const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'
const LOCAL_PATTERN = /^bounces\+(msg_[0-9a-z]{26})-([0-9a-hjkmnp-tv-z]{4})([0-9a-hjkmnp-tv-z]{16})$/

/** A return-path key: the newest signs, every listed one verifies. */
export interface VerpKey {
  id: string
  secret: Buffer
}

export interface VerpAddress {
  messageId: string
  keyId: string
  mac: string
  /** The host after the `@`, lower case. */
  host: string
  /** The sending domain when the host is the default `bounces.<domain>`; undefined for a domain's own return-path host. */
  domain?: string
}

function base32 (bytes: Buffer): string {
  let out = ''
  let bits = 0
  let value = 0
  for (const b of bytes) {
    value = (value << 8) | b
    bits += 8
    while (bits >= 5) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += CROCKFORD[(value << (5 - bits)) & 31]
  return out
}

/** The tag's MAC for one message and recipient under `secret`. */
export function verpMac (secret: Buffer, messageId: string, recipient: string): string {
  const mac = createHmac('sha256', secret).update(`${messageId.toLowerCase()}\n${recipient.trim().toLowerCase()}`).digest()
  return base32(mac.subarray(0, MAC_BYTES)).slice(0, MAC_CHARS)
}

/** The default return-path host of a sending domain. */
export function defaultReturnPathHost (domain: string): string {
  return `${VERP_SUBDOMAIN}${domain.toLowerCase()}`
}

/** The VERP address at `host`: `bounces.<domain>` (defaultReturnPathHost) or the domain's own return-path host. */
export function encodeVerp (messageId: string, recipient: string, host: string, key: VerpKey): string {
  return `${VERP_LOCAL_PREFIX}${messageId}-${key.id}${verpMac(key.secret, messageId, recipient)}@${host.toLowerCase()}`
}

/** The parts of a VERP address, or undefined when `address` is not one (case-insensitive, `<…>` allowed). */
export function decodeVerp (address: string): VerpAddress | undefined {
  const bare = address.trim().replace(/^<(.*)>$/, '$1').toLowerCase()
  const at = bare.lastIndexOf('@')
  if (at <= 0) return undefined
  const local = LOCAL_PATTERN.exec(bare.slice(0, at))
  const host = bare.slice(at + 1)
  if (local === null || !host.includes('.') || host.startsWith('.') || host.endsWith('.')) return undefined
  const verp: VerpAddress = { messageId: local[1]!, keyId: local[2]!, mac: local[3]!, host }
  if (host.startsWith(VERP_SUBDOMAIN) && host.length > VERP_SUBDOMAIN.length) verp.domain = host.slice(VERP_SUBDOMAIN.length)
  return verp
}

/** True when the address was issued for `recipient` (its MAC verifies under `key`). */
export function verpIssuedTo (verp: VerpAddress, key: VerpKey, recipient: string): boolean {
  const expected = Buffer.from(verpMac(key.secret, verp.messageId, recipient))
  const given = Buffer.from(verp.mac)
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/** Which of `recipients` the address was issued for, or undefined when none (a forged or altered tag). */
export function verpRecipient (verp: VerpAddress, key: VerpKey, recipients: readonly string[]): string | undefined {
  return recipients.find((r) => verpIssuedTo(verp, key, r))
}
