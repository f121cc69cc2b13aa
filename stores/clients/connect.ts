import { connect, type NatsConnection } from '@nats-io/transport-node'
import { Redis } from 'ioredis'

/** NATS client settings shared by every process: reconnect forever, a name that shows in `nats server report`. */
export async function connectNats (servers: readonly string[], name: string): Promise<NatsConnection> {
  // noAsyncTraces: no Error (with its stack) built per request/publish; on the webhook path that was ~7 % of CPU.
  return await connect({ servers: [...servers], name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 5000, noAsyncTraces: true })
}

/**
 * Redis with auto-pipelining, and failing fast while disconnected (no offline queue, 1 s command timeout),
 * so callers can answer 503 within a second instead of queueing work behind a dead server.
 */
export function connectRedis (url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: name,
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1000,
    retryStrategy: (times) => Math.min(times * 100, 1000)
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
