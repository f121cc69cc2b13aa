import type { Redis } from 'ioredis'
import type { QueuedMessage } from './send.ts'

/**
 * The read model of messages (status, events, statistics) kept in Redis. The gateway records a message when
 * JetStream has accepted it; the engine's projector applies every event from the event stream.
 */
export class MessageStore {
  constructor (readonly redis: Redis) {}

  /** Called by the gateway after the PubAck, before answering 202. */
  async recordQueued (_msg: QueuedMessage, _status: 'queued' | 'scheduled'): Promise<void> {}
}
