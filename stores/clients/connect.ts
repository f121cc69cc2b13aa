import { connect, type NatsConnection } from '@nats-io/transport-node'
import { Redis, type RedisOptions } from 'ioredis'
import type { RedisTarget } from '../../config/mod.ts'
import { watchMaster } from './redis_watchdog.ts'

/** NATS client settings shared by every process: reconnect forever, a name that shows in `nats server report`. */
export async function connectNats (servers: readonly string[], name: string): Promise<NatsConnection> {
  // noAsyncTraces: no Error (with its stack) built per request/publish; on the webhook path that was ~7 % of CPU.
  return await connect({
    servers: [...servers], name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 5000, noAsyncTraces: true
  })
}

/** How long to wait between reconnects: short, so a Sentinel failover is picked up within a second of finishing. */
const reconnectDelay = (times: number): number => Math.min(times * 100, 1000)

/**
 * ioredis options for a target: one node by URL, or the master a set of sentinels names. Through Sentinel the
 * client asks the sentinels for the current master on every (re)connect and checks the node it reaches is
 * still a master, so after a failover it follows the promoted replica.
 */
export function redisOptions (target: RedisTarget | string, options: RedisOptions): { url?: string, options: RedisOptions } {
  if (typeof target === 'string') return { url: target, options }
  if (target.kind === 'node') return { url: target.url, options }
  return {
    options: {
      ...options,
      sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
      name: target.masterName,
      role: 'master',
      db: target.db,
      ...(target.username !== undefined ? { username: target.username } : {}),
      ...(target.password !== undefined ? { password: target.password } : {}),
      ...(target.sentinelPassword !== undefined ? { sentinelPassword: target.sentinelPassword } : {}),
      // when every sentinel is unreachable, keep asking (as for one node) instead of giving up for good
      sentinelRetryStrategy: reconnectDelay,
      // no failoverDetector: its switch-master message can close a reconnect in progress, which ends the client
      // for good (status "end"); the dead master's closed socket already starts the reconnect through the sentinels.
      // A master demoted while still running answers writes with READONLY: reconnect, and ask the sentinels again.
      reconnectOnError: (err: Error) => err.message.startsWith('READONLY')
    }
  }
}

/**
 * A client for `target` (a URL string is one node); `options` are ioredis' own. Through Sentinel it also watches
 * that the master answers (redis_watchdog.ts), so a master cut off from the network is left for the promoted replica.
 */
export function newRedis (target: RedisTarget | string, options: RedisOptions): Redis {
  const o = redisOptions(target, options)
  if (o.url !== undefined) return new Redis(o.url, o.options)
  const redis = new Redis(o.options)
  watchMaster(redis)
  return redis
}

/**
 * Redis with auto-pipelining, and failing fast while disconnected (no offline queue, 1 s command timeout),
 * so callers can answer 503 within a second instead of queueing work behind a dead server or a failover.
 */
export function connectRedis (target: RedisTarget | string, name: string): Redis {
  return newRedis(target, {
    connectionName: name,
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    retryStrategy: reconnectDelay
  })
}

/** Resolves once Redis is connected, or rejects after `timeoutMs`. */
export async function redisReady (redis: Redis, timeoutMs = 5000): Promise<void> {
  if (redis.status === 'ready') return
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { cleanup(); reject(new Error(`Redis did not answer within ${timeoutMs} ms`)) }, timeoutMs)
    const onReady = (): void => { cleanup(); resolve() }
    const cleanup = (): void => { clearTimeout(timer); redis.off('ready', onReady) }
    redis.on('ready', onReady)
  })
}
