import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import type { ControlPlane } from './protocol/mod.ts'

export interface Engine {
  /** Stops taking work, finishes or hands back what is in flight, within `timeoutMs`. */
  drain: (timeoutMs: number) => Promise<void>
}

export async function startEngine (_config: Config, shared: { nc: NatsConnection, redis: Redis, cp: ControlPlane, log: Logger }): Promise<Engine> {
  const log = shared.log.child({ part: 'engine' })
  log.info('engine started')
  return { drain: async () => {} }
}
