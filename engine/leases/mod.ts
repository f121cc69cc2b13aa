import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import { Kvm } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { DEFAULT_NATS_STORE_MB } from '../../config/mod.ts'
import { KV_SHARD_LEASES, kvBucketOptions, kvShareBytes } from '../../protocol/mod.ts'
import { ensureStoreShare } from '../../stores/clients/mod.ts'
import type { LeaseBucket } from './lease_table.ts'

export { LeaseTable, type LeaseBucket, type LeaseRecord, type LeaseTableOptions } from './lease_table.ts'
export { ShardFences } from './fences.ts'

/**
 * The lease bucket (one revision per key: a lease is only compared with its latest value). Requests time out
 * after `timeoutMs`, so a renew stuck behind a NATS leader election does not hold up the next one.
 * Keys are listed with a stream-info request filtered by subject rather than `kv.keys()`, whose consumer
 * can miss a reply while a cluster node is gone. The bucket has its own share of the store (`storeBytes` is
 * OB_NATS_STORE_MB in bytes), so leases are renewed however full the outbound queue is.
 */
export async function openLeaseBucket (
  nc: NatsConnection, replicas: number, timeoutMs = 5000, storeBytes = DEFAULT_NATS_STORE_MB * 1024 * 1024
): Promise<LeaseBucket> {
  const kvm = new Kvm(jetstream(nc, { timeout: timeoutMs }))
  const kv = await kvm.create(KV_SHARD_LEASES, kvBucketOptions(replicas, storeBytes, KV_SHARD_LEASES))
  const jsm = await jetstreamManager(nc, { timeout: timeoutMs })
  await ensureStoreShare(jsm, `KV_${KV_SHARD_LEASES}`, kvShareBytes(storeBytes, KV_SHARD_LEASES))
  const prefix = `$KV.${KV_SHARD_LEASES}.`
  return {
    kv,
    async keys (filter) {
      const info = await jsm.streams.info(`KV_${KV_SHARD_LEASES}`, { subjects_filter: prefix + filter })
      return Object.keys(info.state.subjects ?? {}).map((s) => s.slice(prefix.length))
    }
  }
}

/** This process's id in lease and presence keys: host, pid and a random suffix, so a restart is a new owner. */
export function processOwnerId (): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`.replace(/[^A-Za-z0-9_-]/g, '_')
}

/** Renew three times per lease term, so one lost renew never costs the lease. */
export function renewIntervalMs (leaseMs: number): number {
  return Math.max(100, Math.floor(leaseMs / 3))
}
