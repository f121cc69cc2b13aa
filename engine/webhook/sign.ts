import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto'

/**
 * The webhook signature, in one place: `X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.
 * It is computed over the exact bytes sent, so the receiver must verify the raw body, not a re-serialisation.
 */
export const DEFAULT_TOLERANCE_S = 300

export function signatureHeader (secret: string | KeyObject, body: string | Uint8Array, unixSeconds: number): string {
  const t = String(unixSeconds)
  const v1 = createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')
  return `t=${t},v1=${v1}`
}

/** Secrets kept as key objects; past this many the cache starts over (webhooks are far fewer). */
const MAX_KEYS = 10_000
const keys = new Map<string, KeyObject>()

/**
 * The webhook secret as a key object, made once per secret: an HMAC keyed with a string copies and imports
 * the key on every call, which is a third of the cost of signing a 1 KB body.
 */
export function signingKey (secret: string): KeyObject {
  let k = keys.get(secret)
  if (k === undefined) {
    if (keys.size >= MAX_KEYS) keys.clear()
    k = createSecretKey(Buffer.from(secret, 'utf8'))
    keys.set(secret, k)
  }
  return k
}

export type VerifyFailure = 'malformed_header' | 'timestamp_out_of_tolerance' | 'signature_mismatch'

export interface VerifyResult { ok: boolean, reason?: VerifyFailure, timestamp?: number }

/**
 * Receiver side: checks one header against the raw body. Accepts several `v1=` values (a receiver may see
 * more than one during a secret change) and compares each in constant time.
 */
export function verifySignature (
  rawBody: string | Buffer,
  header: string | undefined,
  secret: string,
  opts: { toleranceS?: number, now?: number } = {}
): VerifyResult {
  const toleranceS = opts.toleranceS ?? DEFAULT_TOLERANCE_S
  const nowS = Math.floor((opts.now ?? Date.now()) / 1000)
  if (header === undefined || header === '') return { ok: false, reason: 'malformed_header' }
  let t: string | undefined
  const candidates: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const k = part.slice(0, eq).trim()
    const v = part.slice(eq + 1).trim()
    if (k === 't') t = v
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) candidates.push(v)
  }
  if (t === undefined || !/^\d{1,12}$/.test(t) || candidates.length === 0) return { ok: false, reason: 'malformed_header' }
  const timestamp = Number(t)
  if (Math.abs(nowS - timestamp) > toleranceS) return { ok: false, reason: 'timestamp_out_of_tolerance', timestamp }
  const expected = createHmac('sha256', secret).update(t).update('.').update(rawBody).digest()
  let match = false
  for (const c of candidates) {
    // Every candidate is compared, so the time taken does not tell which one matched.
    if (timingSafeEqual(expected, Buffer.from(c, 'hex'))) match = true
  }
  return match ? { ok: true, timestamp } : { ok: false, reason: 'signature_mismatch', timestamp }
}
