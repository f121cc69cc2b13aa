import { workerData } from 'node:worker_threads'
import { newRedis } from '../../stores/clients/mod.ts'
import { Deliverer } from './deliver.ts'
import { DestinationThrottle } from './throttle.ts'
import { TransportCache } from './transports.ts'
import { trustedCas } from '../tls/outbound_tls.ts'
import type { ActorSettings, ActorTask, DeliverResult } from './task.ts'

/**
 * The piscina entry of a shard thread. Its state — SMTP pools, the Redis client for destination shaping,
 * parsed DKIM keys, the MX cache — is created once when the thread starts and closed on a `close` task.
 * The Redis client shapes per destination and records SMTP replies the moment they arrive. The pool runs with
 * `atomics: 'disabled'` so the thread's sockets and timers keep running between tasks.
 */
const settings = workerData as ActorSettings
const redis = newRedis(settings.redis, {
  connectionName: 'outbox-engine-actor',
  enableAutoPipelining: true,
  maxRetriesPerRequest: 1,
  commandTimeout: 1000
})
// An outage surfaces as failed commands, which the deliverer turns into deferrals, and the main thread logs it
// once; without a listener ioredis would print every reconnect attempt as an unhandled error.
redis.on('error', () => {})
const ca = trustedCas(settings.caPem)
const transports = new TransportCache(settings.poolConnections, ca !== undefined ? { ca } : {})
const deliverer = new Deliverer(settings, transports, new DestinationThrottle(redis, settings.hostRatePerS), redis)

export default async function actor (task: ActorTask): Promise<DeliverResult | undefined> {
  if (task.kind === 'close') {
    await deliverer.close()
    transports.close()
    redis.disconnect()
    return undefined
  }
  return await deliverer.run(task)
}
