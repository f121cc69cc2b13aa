import type { NatsConnection } from '@nats-io/transport-node'
import type { Config } from '../../config/mod.ts'
import { ApiError, inlineLimit, splitContent, type QueuedMessage } from '../../protocol/mod.ts'
import { isJetStreamFull } from '../../stores/clients/mod.ts'
import { openContentStore, type ContentStore } from '../../stores/content/mod.ts'

/** A queued message as published: the stream message, and for a large message its content to store first. */
export interface EncodedMessage {
  data: Buffer
  content?: Buffer
}

/**
 * Keeps large messages within any NATS server's `max_payload`: a message whose encoding is over
 * `inlineLimit(max_payload)` (at most 512 KB) is published with a `content_ref`, its content stored beforehand
 * as an object (protocol/queued_content.ts). The caller answers 202 only after both are acknowledged.
 */
export class LargeContent {
  private store?: Promise<ContentStore>

  constructor (private readonly nc: NatsConnection, private readonly config: Config) {}

  encode (msg: QueuedMessage): EncodedMessage {
    const data = Buffer.from(JSON.stringify(msg))
    const maxPayload = this.nc.info?.max_payload
    if (maxPayload === undefined || data.length <= inlineLimit(maxPayload)) return { data }
    const split = splitContent(msg)
    return { data: split.message, content: split.content }
  }

  /** Stores the content of message `id`; resolves once JetStream holds all of it. */
  async put (id: string, content: Buffer): Promise<void> {
    try {
      this.store ??= openContentStore(this.nc, this.config)
      await (await this.store.catch((err: unknown) => { this.store = undefined; throw err })).put(id, content)
    } catch (err) {
      if (isJetStreamFull(err)) throw queueFullError(err)
      throw new ApiError('service_unavailable', NOT_CONFIRMED, { cause: err, retryAfter: 1 })
    }
  }
}

/** The answer to a send JetStream did not confirm in time (a 503 the client retries with its Idempotency-Key). */
export const NOT_CONFIRMED = 'The message store did not confirm the message in time; retry shortly with the same Idempotency-Key.'

/**
 * Seconds a client waits before retrying a send the full store refused: room comes back as queued mail is
 * delivered, which takes longer than a connection hiccup.
 */
export const QUEUE_FULL_RETRY_AFTER_S = 30

/** The answer to a send JetStream refused for lack of room (its stream, or the object store, at its share). */
export function queueFullError (cause: unknown): ApiError {
  return new ApiError(
    'queue_full',
    'The message store is full, so nothing was queued; queued mail is still being delivered, which frees room. ' +
      'Retry later with the same Idempotency-Key.',
    { cause, retryAfter: QUEUE_FULL_RETRY_AFTER_S }
  )
}
