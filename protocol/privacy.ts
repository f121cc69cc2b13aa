import { createHmac } from 'node:crypto'

/**
 * Keyed hashes of erased addresses: what a suppression list keeps of an address erased with `keep_suppressed`, so a
 * later send to it is still refused while the list no longer holds it in clear. The key is derived from the
 * installation secret (OB_SECRET, or the random one kept in NATS) under its own label, so it is never the key that
 * signs tracking links; without the secret a hash cannot be tested against guessed addresses.
 */
const KEY_LABEL = 'outbox.privacy.erased-address.v1'

/** The prefix of a hashed suppression entry's `email`: it can never be an address (it has no `@`). */
export const ERASED_ADDRESS_PREFIX = 'erased:'

/** The key that hashes erased addresses, derived once from the installation secret. */
export function erasedAddressKey (installationSecret: Buffer): Buffer {
  return createHmac('sha256', installationSecret).update(KEY_LABEL).digest()
}

/** `erased:<hex HMAC-SHA256>` of the address as lists compare it (trimmed, lower-cased). */
export function erasedAddress (key: Buffer, email: string): string {
  return ERASED_ADDRESS_PREFIX + createHmac('sha256', key).update(email.trim().toLowerCase()).digest('hex')
}
