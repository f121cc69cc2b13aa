import { StorageType } from '@nats-io/jetstream'
import { KV_BUCKETS, KV_IDEMPOTENCY, KV_SCHEDULE_DECISIONS, KV_SHARD_LEASES, OBJ_INBOUND_RAW, OBJ_OUTBOUND_CONTENT } from './subjects.ts'
import { kvShareBytes, objectStoreShareBytes } from './store_budget.ts'
import { NS_PER_MS } from './jetstream_specs.ts'

/** The key-value and object buckets' settings; each bucket's size is its share of the store (store_budget.ts). */

/**
 * Raw messages are deleted once processed; the TTL only bounds what a crash between storing a message and
 * publishing its job leaves behind (the sender got 451 and retries, so nothing is lost).
 */
export const INBOUND_RAW_TTL_MS = 7 * 24 * 3600_000 // 7 days

/**
 * Settings of every key-value bucket (control plane and shard leases): only the latest value of a key is kept, in
 * the bucket's share of the store (the client makes buckets `discard: new`).
 */
export function kvBucketOptions (
  replicas: number, storeBytes: number, bucket: string
): { replicas: number, history: number, max_bytes: number } {
  return { replicas, history: 1, max_bytes: kvShareBytes(storeBytes, bucket) }
}

/** The raw-message object store of inbound mail (the client makes object stores `discard: new`). */
export function inboundRawStoreOptions (
  replicas: number, storeBytes: number
): { replicas: number, storage: StorageType, ttl: number, description: string, max_bytes: number } {
  return {
    replicas,
    storage: StorageType.File,
    ttl: INBOUND_RAW_TTL_MS * NS_PER_MS,
    description: 'Raw inbound messages awaiting processing',
    max_bytes: objectStoreShareBytes(storeBytes, OBJ_INBOUND_RAW)
  }
}

/**
 * A bucket whose entries expire `ttlMs` after they were written (a bucket-wide max age: nats-server 2.9 has no
 * per-key TTL), capped at its share of the store like every other bucket.
 */
export function expiringKvBucketOptions (replicas: number, ttlMs: number, storeBytes: number, bucket: string): {
  replicas: number, history: number, ttl: number, max_bytes: number
} {
  return { replicas, history: 1, ttl: ttlMs, max_bytes: kvShareBytes(storeBytes, bucket) }
}

/** Every bucket by name, for the operations guide. */
export const JETSTREAM_BUCKETS: ReadonlyArray<{ kind: 'kv' | 'object', name: string }> = [
  ...Object.values(KV_BUCKETS).map((name) => ({ kind: 'kv' as const, name })),
  { kind: 'kv', name: KV_SHARD_LEASES },
  { kind: 'kv', name: KV_SCHEDULE_DECISIONS },
  { kind: 'kv', name: KV_IDEMPOTENCY },
  { kind: 'object', name: OBJ_INBOUND_RAW },
  { kind: 'object', name: OBJ_OUTBOUND_CONTENT }
]
