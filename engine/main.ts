import { jetstream } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import type { ControlPlane } from './protocol/mod.ts'
import { installationSecret } from './protocol/tracking_tokens.ts'
import { STREAM_OUTBOUND } from './protocol/subjects.ts'
import { consumerName, ensureConsumers } from './consumers.ts'
import { DeliveryState } from './delivery_state.ts'
import { ShardDispatcher } from './dispatcher.ts'
import { MessageProcessor } from './process_message.ts'
import { ShardActors } from './shards.ts'

export interface Engine {
  /** The shards this process consumes. */
  readonly ownedShards: readonly number[]
  /** Stops taking work, finishes or hands back what is in flight, within `timeoutMs`. */
  drain: (timeoutMs: number) => Promise<void>
}

/** Every shard, for now: shard leases across engine processes come later and only change this list. */
function shardsToOwn (config: Config): number[] {
  return Array.from({ length: config.engine.shards }, (_v, i) => i)
}

export async function startEngine (config: Config, shared: { nc: NatsConnection, redis: Redis, cp: ControlPlane, log: Logger }): Promise<Engine> {
  const log = shared.log.child({ part: 'engine' })
  const ownedShards = shardsToOwn(config)
  await ensureConsumers(shared.nc, ownedShards, config.engine.ackWaitMs)
  const secret = await installationSecret(shared.cp.settings, config.secret)
  const threads = Math.min(config.engine.threads, ownedShards.length)
  const actors = new ShardActors({
    redisUrl: config.redis.url,
    ...(config.smtp.relay !== undefined ? { relay: config.smtp.relay } : {}),
    outboundPort: config.smtp.outboundPort,
    dnsServers: [...config.dnsServers],
    poolConnections: config.smtp.poolConnections,
    hostRatePerS: config.delivery.hostRatePerS,
    publicUrl: config.http.publicUrl,
    secret: new Uint8Array(secret)
  }, threads, Math.ceil(ownedShards.length / threads), config.engine.shardCapacity)
  const js = jetstream(shared.nc)
  const processor = new MessageProcessor({ config, js, cp: shared.cp, state: new DeliveryState(shared.redis), actors, log })
  const dispatchers: ShardDispatcher[] = []
  for (const shard of ownedShards) {
    const consumer = await js.consumers.get(STREAM_OUTBOUND, consumerName(shard))
    const d = new ShardDispatcher(shard, consumer, processor, config.engine.shardCapacity, config.engine.ackWaitMs, log)
    d.start()
    dispatchers.push(d)
  }
  log.info({ shards: ownedShards.length, threads, relay: config.smtp.relay ?? null }, 'engine started')
  let draining: Promise<void> | undefined
  return {
    ownedShards,
    drain (timeoutMs) {
      draining ??= (async () => {
        const deadline = Date.now() + timeoutMs
        await Promise.all(dispatchers.map(async (d) => await d.drain(deadline)))
        await actors.close()
        log.info('engine drained')
      })()
      return draining
    }
  }
}
