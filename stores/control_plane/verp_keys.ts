import { randomBytes } from 'node:crypto'
import { KvConflictError, type KvMirror } from './kv_mirror.ts'
import { VERP_KEY_ID_LENGTH, type InternalErrorCode, type VerpKey } from '../../protocol/mod.ts'

/**
 * The return-path keys, one KV entry per key in their own bucket (`ob_verp_keys`), mirrored in every process.
 * The newest key signs new return paths; every key still listed verifies, so rotating never breaks an address
 * already issued. Retiring a key (after the reports for mail it signed have come in) makes its addresses
 * unusable. The secret never leaves the control plane: it is not shown by the CLI or the API.
 */
export interface VerpKeyRecord {
  id: string
  /** 32 random bytes, base64 */
  secret: string
  created_at: string
}

export class VerpKeyError extends Error {
  constructor (readonly code: Extract<InternalErrorCode, 'verp_key_unknown' | 'verp_key_in_use'>, message: string) {
    super(message)
    this.name = 'VerpKeyError'
  }
}

const KEY_ID_ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'
const SECRET_BYTES = 32

function newKeyId (): string {
  let id = ''
  for (const b of randomBytes(VERP_KEY_ID_LENGTH)) id += KEY_ID_ALPHABET[b & 31]
  return id
}

function toKey (r: VerpKeyRecord): VerpKey {
  return { id: r.id, secret: Buffer.from(r.secret, 'base64') }
}

/** Newest first: by creation time, then by id (two keys made in the same millisecond). */
function newestFirst (a: VerpKeyRecord, b: VerpKeyRecord): number {
  return a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : (a.id < b.id ? 1 : -1)
}

export class VerpKeyRing {
  private readonly decoded = new Map<string, { record: VerpKeyRecord, key: VerpKey }>()

  constructor (private readonly mirror: KvMirror<VerpKeyRecord>) {}

  /** The keys, newest first (what `outbox verp-keys list` shows, without secrets). */
  list (): VerpKeyRecord[] {
    return this.mirror.list().sort(newestFirst)
  }

  /** The key that signs new return paths. */
  signing (): VerpKey {
    const newest = this.list()[0]
    if (newest === undefined) {
      throw new VerpKeyError('verp_key_unknown', 'no return-path key exists; the control plane creates one when it opens')
    }
    return this.key(newest.id)!
  }

  /** A key that verifies, by id; undefined when there is none (never issued, or retired). */
  key (id: string): VerpKey | undefined {
    const record = this.mirror.get(id)
    if (record === undefined) return undefined
    const hit = this.decoded.get(id)
    if (hit !== undefined && hit.record === record) return hit.key
    const key = toKey(record)
    this.decoded.set(id, { record, key })
    return key
  }

  /** Adds a new key, which signs from now on; the others keep verifying. Returns it (without its secret). */
  async rotate (now = new Date()): Promise<Omit<VerpKeyRecord, 'secret'>> {
    for (;;) {
      const record: VerpKeyRecord = { id: newKeyId(), secret: randomBytes(SECRET_BYTES).toString('base64'), created_at: now.toISOString() }
      try {
        await this.mirror.create(record.id, record)
        return { id: record.id, created_at: record.created_at }
      } catch (err) {
        if (!(err instanceof KvConflictError)) throw err // an id taken already: draw another
      }
    }
  }

  /** Removes a key that no longer signs: return paths it made stop being accepted. */
  async retire (id: string): Promise<void> {
    const keys = this.list()
    if (!keys.some((k) => k.id === id)) throw new VerpKeyError('verp_key_unknown', `no return-path key ${id}`)
    if (keys[0]!.id === id) throw new VerpKeyError('verp_key_in_use', `the key ${id} is the newest and signs new mail; rotate first`)
    await this.mirror.delete(id)
  }

  /** Creates the first key when there is none; several processes starting at once may each add one (harmless). */
  async ensure (): Promise<void> {
    if (this.mirror.size === 0) await this.rotate()
  }
}
