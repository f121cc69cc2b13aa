import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto'
import { HDR_SIGNATURE, HDR_WEBHOOK_ID, HDR_WEBHOOK_SIGNATURE, HDR_WEBHOOK_TIMESTAMP, type WebhookRecord } from '../protocol/mod.ts'

/**
 * The webhook signatures, in one place: `X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`
 * and the Standard Webhooks `webhook-signature`. Both are computed over the exact bytes sent, so the receiver must
 * verify the raw body, not a re-serialisation.
 */
export const DEFAULT_TOLERANCE_S = 300

/** One key or several (the current secret and, during a rotation's grace period, the previous one). */
export type SigningKeys = string | KeyObject | ReadonlyArray<string | KeyObject>

const asList = (keys: SigningKeys): ReadonlyArray<string | KeyObject> =>
  (typeof keys === 'string' || !Array.isArray(keys) ? [keys as string | KeyObject] : keys)

/** `t=<unix>,v1=<hex>`, with one `v1=` per key, current secret first. */
export function signatureHeader (keys: SigningKeys, body: string | Uint8Array, unixSeconds: number): string {
  const t = String(unixSeconds)
  let header = `t=${t}`
  for (const key of asList(keys)) header += `,v1=${createHmac('sha256', key).update(`${t}.`).update(body).digest('hex')}`
  return header
}

/**
 * Standard Webhooks (`webhook-signature`): `v1,<base64 HMAC-SHA256(key, "<id>.<unix>.<body>")>`, space-separated
 * when there are several keys. The key is what `new Webhook(secret)` of the standardwebhooks package reads: the
 * bytes of the base64 text after `whsec_` (see standardSigningKey), not the secret string itself.
 */
export function standardSignatureHeader (
  keys: ReadonlyArray<KeyObject>, eventId: string, unixSeconds: number, body: string | Uint8Array
): string {
  const prefix = `${eventId}.${unixSeconds}.`
  return keys.map((key) => `v1,${createHmac('sha256', key).update(prefix).update(body).digest('base64')}`).join(' ')
}

/** The secrets a request is signed with at `nowMs`: the current one, then the previous one during its grace period. */
export function activeSecrets (
  w: Pick<WebhookRecord, 'secret' | 'previous_secret' | 'previous_secret_expires_at'>, nowMs: number
): string[] {
  if (w.previous_secret === undefined || w.previous_secret_expires_at === undefined) return [w.secret]
  return Date.parse(w.previous_secret_expires_at) > nowMs ? [w.secret, w.previous_secret] : [w.secret]
}

/** Secrets kept as key objects; past this many the cache starts over (webhooks are far fewer). */
const MAX_KEYS = 10_000
const keys = new Map<string, KeyObject>()
const standardKeys = new Map<string, KeyObject>()

function cachedKey (cache: Map<string, KeyObject>, secret: string, bytes: () => Buffer): KeyObject {
  let k = cache.get(secret)
  if (k === undefined) {
    if (cache.size >= MAX_KEYS) cache.clear()
    k = createSecretKey(bytes())
    cache.set(secret, k)
  }
  return k
}

/**
 * The webhook secret as a key object, made once per secret: an HMAC keyed with a string copies and imports
 * the key on every call, which is a third of the cost of signing a 1 KB body. X-Service-Signature is keyed
 * with the whole secret string.
 */
export function signingKey (secret: string): KeyObject {
  return cachedKey(keys, secret, () => Buffer.from(secret, 'utf8'))
}

const STANDARD_PREFIX = 'whsec_'

/** The Standard Webhooks key of a secret: the base64 text after `whsec_`, decoded. */
export function standardSigningKey (secret: string): KeyObject {
  return cachedKey(standardKeys, secret, () =>
    Buffer.from(secret.startsWith(STANDARD_PREFIX) ? secret.slice(STANDARD_PREFIX.length) : secret, 'base64'))
}

/**
 * The signature headers of one request: X-Service-Signature and the Standard Webhooks trio, each with one
 * signature per active secret (two during a rotation's grace period). `webhook-id` is the event id, so it is
 * the same on every retry and replay of the event.
 */
export function signedHeaders (webhook: WebhookRecord, eventId: string, body: Buffer, nowMs: number): string[] {
  const t = Math.floor(nowMs / 1000)
  const secrets = activeSecrets(webhook, nowMs)
  return [
    HDR_SIGNATURE, signatureHeader(secrets.map(signingKey), body, t),
    HDR_WEBHOOK_ID, eventId,
    HDR_WEBHOOK_TIMESTAMP, String(t),
    HDR_WEBHOOK_SIGNATURE, standardSignatureHeader(secrets.map(standardSigningKey), eventId, t, body)
  ]
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
