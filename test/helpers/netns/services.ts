import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from '@nats-io/transport-node'
import { jetstreamManager } from '@nats-io/jetstream'
import { Redis } from 'ioredis'
import { binary } from '../servers.ts'
import { SENTINEL_MASTER } from '../redis_sentinel.ts'
import { eventually } from '../waiting.ts'
import { HostProcess } from './host_process.ts'
import type { Host } from './net.ts'

export const NATS_PORT = 4222
const NATS_ROUTE_PORT = 6222
/** Each node's monitoring port (`/connz` tells which clients a node serves). */
export const NATS_MONITOR_PORT = 8222
export const REDIS_PORT = 6379
export const SENTINEL_PORT = 26379

/** A temporary directory for one server's data and configuration, removed by `removeDirs`. */
const dirs: string[] = []
function dataDir (label: string): string {
  const d = mkdtempSync(join(tmpdir(), `outbox-netns-${label}-`))
  dirs.push(d)
  return d
}
export function removeDirs (): void {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
}

/**
 * One nats-server with JetStream per host, routed to the others, as a three-machine cluster is configured
 * (docs/scaling.md): clients on 4222, routes on 6222, each node listening on its host's address only.
 */
export async function startNatsCluster (hosts: Host[], name: string): Promise<HostProcess[]> {
  const routes = hosts.map((h) => `nats://${h.address}:${NATS_ROUTE_PORT}`).join(',')
  const nodes = await Promise.all(hosts.map(async (h, i) => {
    const dir = dataDir(h.name)
    const conf = join(dir, 'nats.conf')
    writeFileSync(conf, 'max_payload: 12MB\n') // as Outbox's own server: 10 MB send bodies
    return await HostProcess.start(h, 'nats-server', binary('nats-server'), [
      '-c', conf, '-js', '-sd', dir, '-a', h.address, '-p', String(NATS_PORT), '-m', String(NATS_MONITOR_PORT),
      '--server_name', `n${i + 1}`,
      '--cluster_name', name, '--cluster', `nats://${h.address}:${NATS_ROUTE_PORT}`, '--routes', routes
    ], { ready: NATS_PORT })
  }))
  await jetStreamReady(natsUrl(hosts), hosts.length)
  return nodes
}

export function natsUrl (hosts: Host[]): string {
  return hosts.map((h) => `nats://${h.address}:${NATS_PORT}`).join(',')
}

/** Resolves once the meta group has a leader and a stream with `replicas` replicas can be made. */
async function jetStreamReady (url: string, replicas: number, timeoutMs = 30_000): Promise<void> {
  const nc = await connect({ servers: url.split(','), timeout: 2000 })
  try {
    await eventually(async () => {
      try {
        const jsm = await jetstreamManager(nc, { timeout: 1000 })
        const probe = `ob_probe_${Date.now()}`
        await jsm.streams.add({ name: probe, subjects: [`${probe}.>`], num_replicas: replicas })
        await jsm.streams.delete(probe)
        return true
      } catch {
        return false
      }
    }, 'the JetStream cluster to elect its meta leader', timeoutMs, 250)
  } finally {
    await nc.close()
  }
}

/** The addresses of the clients connected to the NATS node on `host` (its monitoring endpoint). */
export async function natsClients (host: Host): Promise<string[]> {
  const res = await fetch(`http://${host.address}:${NATS_MONITOR_PORT}/connz?limit=1000`, { signal: AbortSignal.timeout(5000) })
  const body = await res.json() as { connections?: Array<{ ip: string }> }
  return [...new Set((body.connections ?? []).map((c) => c.ip))].sort()
}

function redisArgs (host: Host, dir: string, extra: string[]): string[] {
  return ['--port', String(REDIS_PORT), '--bind', host.address, '--protected-mode', 'no', '--save', '', '--appendonly', 'yes',
    '--maxmemory-policy', 'noeviction', '--dir', dir, ...extra]
}

export async function startRedis (host: Host, extra: string[] = []): Promise<HostProcess> {
  return await HostProcess.start(host, 'redis-server', binary('redis-server'), redisArgs(host, dataDir(host.name), extra),
    { ready: REDIS_PORT })
}

export interface SentinelLayout { master: HostProcess, replica: HostProcess, sentinels: HostProcess[], url: string }

/**
 * A Redis master, a replica and three Sentinels (quorum 2), each on its own host, with the small failover
 * settings of test/helpers/redis_sentinel.ts (down after 1 s, failover timeout 3 s).
 */
export async function startSentinelSet (master: Host, replica: Host, sentinelHosts: Host[]): Promise<SentinelLayout> {
  const m = await startRedis(master, ['--repl-diskless-sync-delay', '0'])
  const r = await startRedis(replica, ['--replicaof', master.address, String(REDIS_PORT)])
  const sentinels = await Promise.all(sentinelHosts.map(async (h) => {
    const dir = dataDir(h.name)
    const conf = join(dir, 'sentinel.conf')
    writeFileSync(conf, [
      `port ${SENTINEL_PORT}`, `bind ${h.address}`, 'protected-mode no', `dir ${dir}`,
      `sentinel monitor ${SENTINEL_MASTER} ${master.address} ${REDIS_PORT} 2`,
      `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
      `sentinel failover-timeout ${SENTINEL_MASTER} 3000`,
      `sentinel parallel-syncs ${SENTINEL_MASTER} 1`, ''
    ].join('\n'))
    return await HostProcess.start(h, 'redis-sentinel', binary('redis-server'), [conf, '--sentinel'], { ready: SENTINEL_PORT })
  }))
  const url = `redis+sentinel://${sentinelHosts.map((h) => `${h.address}:${SENTINEL_PORT}`).join(',')}/${SENTINEL_MASTER}`
  const layout = { master: m, replica: r, sentinels, url }
  await eventually(async () => (await sentinelMasters(sentinelHosts)).every((a) => a === master.address) &&
    /master_link_status:up/.test(String(await ask(replica.address, REDIS_PORT, 'INFO', 'replication') ?? '')),
  'the sentinels to agree on the master and the replica to sync', 30_000, 200)
  return layout
}

/** One command to one server; undefined when it does not answer. */
export async function ask (address: string, port: number, ...args: string[]): Promise<unknown> {
  const r = new Redis({ port, host: address, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 })
  r.on('error', () => {})
  try {
    await r.connect()
    return await r.call(args[0]!, ...args.slice(1))
  } catch {
    return undefined
  } finally {
    r.disconnect()
  }
}

/** The master's address as each sentinel names it (undefined where a sentinel does not answer). */
export async function sentinelMasters (sentinelHosts: Host[]): Promise<Array<string | undefined>> {
  return await Promise.all(sentinelHosts.map(async (h) => {
    const a = await ask(h.address, SENTINEL_PORT, 'SENTINEL', 'get-master-addr-by-name', SENTINEL_MASTER) as string[] | null | undefined
    return a === undefined || a === null ? undefined : a[0]
  }))
}
