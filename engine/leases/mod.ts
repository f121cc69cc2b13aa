import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import { Kvm, type KV } from '@nats-io/kv'
import type { NatsConnection } from '@nats-io/transport-node'
import { KV_SHARD_LEASES } from '../protocol/subjects.ts'

export { LeaseTable, type LeaseRecord, type LeaseTableOptions } from './lease_table.ts'

/** The lease bucket; one revision per key is enough, a lease is only ever compared with its latest value. */
export async function openLeaseBucket (nc: NatsConnection, replicas: number): Promise<KV> {
  return await new Kvm(nc).create(KV_SHARD_LEASES, { replicas, history: 1 })
}

/** This process's id in lease and presence keys: host, pid and a random suffix, so a restart is a new owner. */
export function processOwnerId (): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`.replace(/[^A-Za-z0-9_-]/g, '_')
}

/** Renew three times per lease term, so one lost renew never costs the lease. */
export function renewIntervalMs (leaseMs: number): number {
  return Math.max(100, Math.floor(leaseMs / 3))
}
