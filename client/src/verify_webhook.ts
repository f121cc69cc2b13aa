export interface VerifyWebhookOptions {
  /** Largest accepted age (and clock skew) of the signature, in seconds. Default 300. */
  tolerance?: number
  /** The current Unix time in seconds; default now. */
  now?: number
}

const encoder = new TextEncoder()

function toHex (bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('')
}

/** Compares in time that depends only on the length, so a mismatch position leaks nothing. */
function constantTimeEqual (a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let diff = 0
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i)
  return diff === 0
}

/**
 * Checks an `X-Service-Signature: t=<unix>,v1=<hex>` header: HMAC-SHA256 of `${t}.${rawBody}` with the webhook
 * secret, compared in constant time, and `t` within `tolerance` seconds of now. Pass the body exactly as
 * received (not re-serialised JSON). Uses WebCrypto, so it runs in browsers, Node 20+, Deno and workers.
 * Resolves to false on any mismatch; answer such requests with 401.
 */
export async function verifyWebhook (
  rawBody: string | Uint8Array, header: string | null | undefined, secret: string, options: VerifyWebhookOptions = {}
): Promise<boolean> {
  if (typeof header !== 'string' || header === '' || secret === '') return false
  let t: string | undefined
  const signatures: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const name = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (name === 't') t = value
    else if (name === 'v1') signatures.push(value.toLowerCase())
  }
  if (t === undefined || !/^\d+$/.test(t) || signatures.length === 0) return false
  const now = options.now ?? Math.floor(Date.now() / 1000)
  if (Math.abs(now - Number(t)) > (options.tolerance ?? 300)) return false
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody
  const signed = new Uint8Array(t.length + 1 + body.length)
  signed.set(encoder.encode(`${t}.`), 0)
  signed.set(body, t.length + 1)
  const key = await globalThis.crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const expected = toHex(await globalThis.crypto.subtle.sign('HMAC', key, signed))
  let ok = false
  for (const sig of signatures) ok = constantTimeEqual(expected, sig) || ok
  return ok
}
