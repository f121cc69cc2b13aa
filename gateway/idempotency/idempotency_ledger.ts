import { DEFAULT_NATS_STORE_MB } from '../../config/mod.ts'
import { jetstream } from '@nats-io/jetstream'
import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { KV_IDEMPOTENCY, expiringKvBucketOptions, sha256Hex } from '../../protocol/mod.ts'

/**
 * Finished Idempotency-Key requests in the JetStream KV bucket `ob_idempotency`, kept as long as the key is
 * promised (24 h, the bucket's max age): `<org_id>.<SHA-256 of the key>` → the record IdempotencyStore keeps in
 * Redis (`d` + fingerprint + response, or `r` + fingerprint + the ids of a failed publish). Redis answers every
 * claim; this copy is read only while Redis may have lost records (see IdempotencyStore), so that a flushed,
 * evicting or replaced Redis never turns a retry into a second message.
 */
export class IdempotencyLedger {
  private constructor (private readonly kv: KV) {}

  /** `timeoutMs`: how long a read or write waits for JetStream (the gateway's publish timeout: a send waits no longer). */
  static async open (
    nc: NatsConnection, replicas: number, ttlMs: number, timeoutMs: number, storeBytes = DEFAULT_NATS_STORE_MB * 1024 * 1024
  ): Promise<IdempotencyLedger> {
    const kvm = new Kvm(jetstream(nc, { timeout: timeoutMs }))
    return new IdempotencyLedger(await kvm.create(KV_IDEMPOTENCY, expiringKvBucketOptions(replicas, ttlMs, storeBytes, KV_IDEMPOTENCY)))
  }

  /** The record and how long ago it was written (ms), or undefined. */
  async read (orgId: string, key: string, now: number): Promise<{ value: string, ageMs: number } | undefined> {
    const e = await this.kv.get(ledgerKey(orgId, key))
    if (e === null || e.operation !== 'PUT') return undefined
    return { value: e.string(), ageMs: Math.max(0, now - e.created.getTime()) }
  }

  async write (orgId: string, key: string, value: string): Promise<void> {
    await this.kv.put(ledgerKey(orgId, key), value)
  }
}

/** Idempotency-Keys may hold any printable character; a KV key may not, so the key is hashed. */
function ledgerKey (orgId: string, key: string): string {
  return `${orgId}.${sha256Hex(key)}`
}
