import * as crypto from 'node:crypto'
import { randomBytes, randomFillSync, createHash } from 'node:crypto'

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz'
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

export type IdPrefix = 'org' | 'dom' | 'key' | 'msg' | 'evt' | 'wh' | 'rt' | 'tpl' | 'whd' | 'req' | 'opk' | 'aud' | 'era'

// Random bytes for ids are drawn from a pool refilled 4 KB at a time: one `randomBytes` call per id cost about
// 5 % of the gateway's CPU on the send path. Each byte is used once.
const POOL_BYTES = 4096
const pool = Buffer.alloc(POOL_BYTES)
let poolAt = POOL_BYTES

/**
 * `prefix_` + 10 characters of millisecond time + 16 random characters (Crockford base32, lower case).
 * Ids sort by creation time, which lets lists page by id.
 */
export function newId (prefix: IdPrefix, now = Date.now()): string {
  let time = ''
  let t = now
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32] + time
    t = Math.floor(t / 32)
  }
  if (poolAt + 16 > POOL_BYTES) {
    randomFillSync(pool)
    poolAt = 0
  }
  let rand = ''
  for (let i = 0; i < 16; i++) rand += CROCKFORD[pool[poolAt++]! & 31]
  return `${prefix}_${time}${rand}`
}

/** The creation time (ms) `newId` wrote into an id, or undefined when `id` is not one of its ids. */
export function idTime (id: string): number | undefined {
  const m = /^[a-z]{2,3}_([0-9a-z]{10})[0-9a-z]{16}$/.exec(id)
  if (m === null) return undefined
  let t = 0
  for (const ch of m[1]!) {
    const v = CROCKFORD.indexOf(ch)
    if (v < 0) return undefined
    t = t * 32 + v
  }
  return t
}

/** Random base62 text; 32 characters carry about 190 bits. */
export function randomToken (length = 32): string {
  const bytes = randomBytes(length * 2)
  let out = ''
  for (let i = 0; i < bytes.length && out.length < length; i++) {
    // 248 = 4 × 62: rejecting the rest keeps every character equally likely.
    if (bytes[i]! < 248) out += BASE62[bytes[i]! % 62]
  }
  return out.length === length ? out : out + randomToken(length - out.length)
}

/**
 * The one-shot `crypto.hash` (Node ≥ 20.12) costs a quarter of a Hash object's update and digest; the gateway
 * hashes every recipient for the suppression check.
 */
const oneShotHash = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash

export function sha256Hex (value: string): string {
  return oneShotHash !== undefined ? oneShotHash('sha256', value, 'hex') : createHash('sha256').update(value).digest('hex')
}

export const ID_PATTERN = '^[a-z]{2,3}_[0-9a-z]{26}$'

const ID_BODY_LENGTH = 26

/**
 * Whether `value` has the shape `newId(prefix)` gives: the prefix, `_`, then 26 of `[0-9a-z]`. Checked before an
 * id from a path reaches a store's key names, so `msg_…:evs` can never address another record.
 */
export function isId (prefix: IdPrefix, value: string): boolean {
  if (value.length !== prefix.length + 1 + ID_BODY_LENGTH || !value.startsWith(prefix) || value[prefix.length] !== '_') return false
  for (let i = prefix.length + 1; i < value.length; i++) {
    const c = value.charCodeAt(i)
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 122))) return false
  }
  return true
}
