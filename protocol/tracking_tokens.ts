import { createHmac, timingSafeEqual, randomBytes } from 'node:crypto'
import type { KV } from '@nats-io/kv'

/**
 * Tokens in tracking and unsubscribe links: base64url(JSON) + "." + base64url(HMAC-SHA256, 16 bytes).
 * A forged or altered token fails `verifyToken` and yields no event.
 */
export type TokenKind = 'o' | 'c' | 'u'

export interface TokenClaims {
  /** open, click or unsubscribe */
  k: TokenKind
  /** organisation */
  o: string
  /** message id */
  m: string
  /** recipient address */
  r: string
  /** original URL (click tokens) */
  u?: string
}

const MAC_BYTES = 16

// C0 controls and DEL. CR and LF in a `Location` header end it and start another (response splitting); the
// WHATWG parser silently drops tabs and line breaks, so they are refused before it runs, not after.
// eslint-disable-next-line no-control-regex -- control characters are what this refuses
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/

/**
 * Whether a link may be tracked, that is carried in a click token and later sent back as a redirect's `Location`:
 * an absolute http or https URL by the WHATWG parser, without any control character. Checked when links are
 * rewritten and again when a click token is redeemed.
 */
export function isTrackableUrl (value: string): boolean {
  if (CONTROL_CHARACTER.test(value)) return false
  let url: URL
  try { url = new URL(value) } catch { return false }
  return url.protocol === 'http:' || url.protocol === 'https:'
}

function mac (secret: Buffer, payload: string): Buffer {
  return createHmac('sha256', secret).update(payload).digest().subarray(0, MAC_BYTES)
}

export function signToken (secret: Buffer, claims: TokenClaims): string {
  const payload = Buffer.from(JSON.stringify(claims)).toString('base64url')
  return `${payload}.${mac(secret, payload).toString('base64url')}`
}

export function verifyToken (secret: Buffer, token: string): TokenClaims | undefined {
  const dot = token.indexOf('.')
  if (dot <= 0 || token.length > 8192) return undefined
  const payload = token.slice(0, dot)
  const given = Buffer.from(token.slice(dot + 1), 'base64url')
  if (given.length !== MAC_BYTES || !timingSafeEqual(given, mac(secret, payload))) return undefined
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TokenClaims
    if (typeof claims.m !== 'string' || typeof claims.r !== 'string' || typeof claims.o !== 'string') return undefined
    if (!['o', 'c', 'u'].includes(claims.k)) return undefined
    return claims
  } catch {
    return undefined
  }
}

const SECRET_KEY = 'tracking_secret'

/**
 * `OB_SECRET` when set; otherwise one random secret per installation, created once in the settings
 * bucket so every gateway and engine signs and checks with the same key.
 */
export async function installationSecret (settings: KV, configured: string | undefined): Promise<Buffer> {
  if (configured !== undefined) return Buffer.from(configured, 'utf8')
  const existing = await settings.get(SECRET_KEY)
  if (existing !== null && existing.operation === 'PUT') return Buffer.from(existing.value)
  try {
    await settings.create(SECRET_KEY, randomBytes(32))
  } catch {
    // another process created it first; read theirs
  }
  const entry = await settings.get(SECRET_KEY)
  if (entry === null) throw new Error('tracking secret could not be stored')
  return Buffer.from(entry.value)
}
