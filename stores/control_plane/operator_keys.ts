import { newId, randomToken, sha256Hex, type OperatorKeyRecord } from '../../protocol/mod.ts'
import type { KvMirror } from './kv_mirror.ts'

/** `ob_op_` and 32 base62 characters (about 190 bits). */
export const OPERATOR_KEY_PREFIX = 'ob_op_'
export const OPERATOR_KEY_SHAPE = /^ob_op_[A-Za-z0-9]{32,64}$/
/** What lists show of a key: `ob_op_` and 6 characters, the same 12 characters as an API key's display prefix. */
const DISPLAY_PREFIX_LENGTH = 12
const PRESENTED_HASHES = 1000

/** What `outbox operator key list` shows: never the value or its hash. */
export type OperatorKeyView = Omit<OperatorKeyRecord, 'hash'>

export function operatorKeyView (k: OperatorKeyRecord): OperatorKeyView {
  const { hash: _hash, ...view } = k
  return view
}

/**
 * Operator keys in their own bucket (`ob_operator_keys`, keyed by id), mirrored like API keys. Only the SHA-256 of a
 * value is stored; a value is shown once, when it is made. Revoking keeps the record (with `revoked_at`) for the list.
 */
export class OperatorKeys {
  private readonly presented = new Map<string, string>()

  constructor (private readonly mirror: KvMirror<OperatorKeyRecord>) {}

  /** Oldest first. */
  list (): OperatorKeyRecord[] {
    return this.mirror.list()
  }

  get (id: string): OperatorKeyRecord | undefined {
    return this.mirror.get(id)
  }

  /** The record of a presented value (revoked or not), by its SHA-256; the digest of a matching value is remembered. */
  byValue (value: string): OperatorKeyRecord | undefined {
    const known = this.presented.get(value)
    if (known !== undefined) return this.mirror.getBy('hash', known)
    const hash = sha256Hex(value)
    const key = this.mirror.getBy('hash', hash)
    if (key !== undefined) {
      if (this.presented.size >= PRESENTED_HASHES) this.presented.clear()
      this.presented.set(value, hash)
    }
    return key
  }

  async create (name: string, now = new Date()): Promise<{ record: OperatorKeyRecord, value: string }> {
    const value = OPERATOR_KEY_PREFIX + randomToken(32)
    const record: OperatorKeyRecord = {
      id: newId('opk', now.getTime()),
      name,
      hash: sha256Hex(value),
      prefix: value.slice(0, DISPLAY_PREFIX_LENGTH),
      created_at: now.toISOString()
    }
    await this.mirror.create(record.id, record)
    return { record, value }
  }

  /** Idempotent: a second revocation keeps the first `revoked_at`. Undefined when no key has this id. */
  async revoke (id: string, now = new Date()): Promise<OperatorKeyRecord | undefined> {
    return await this.mirror.modify(id, (cur) => (cur.revoked_at !== undefined ? undefined : { ...cur, revoked_at: now.toISOString() }))
  }
}
