import { jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { CONTENT_INLINE_MAX_BYTES, OBJ_OUTBOUND_CONTENT, STREAM_OUTBOUND, inlineLimit } from '../../protocol/mod.ts'
import { isStreamNotFound } from '../../stores/clients/mod.ts'

/** The streams a send writes to: the outbound queue, and the object store of large messages' content. */
const SEND_STREAMS = [STREAM_OUTBOUND, `OBJ_${OBJ_OUTBOUND_CONTENT}`]

/**
 * Readiness probe "JetStream store full": true while a stream a send writes to has less room left (below its
 * `max_bytes`, its share of OB_NATS_STORE_MB) than one queued message of the largest size kept whole, so sends
 * are being, or are about to be, refused with 503 `queue_full`. It turns false again as delivery frees room.
 * A stream that does not exist yet (the content bucket is made on first use) has room.
 */
export async function jetStreamStoreFull (nc: NatsConnection): Promise<boolean> {
  const jsm = await jetstreamManager(nc, { checkAPI: false })
  const headroom = inlineLimit(nc.info?.max_payload ?? CONTENT_INLINE_MAX_BYTES * 2)
  const full = await Promise.all(SEND_STREAMS.map(async (name) => {
    try {
      const { config, state } = await jsm.streams.info(name)
      return config.max_bytes > 0 && state.bytes + headroom > config.max_bytes
    } catch (err) {
      if (isStreamNotFound(err)) return false
      throw err
    }
  }))
  return full.includes(true)
}
