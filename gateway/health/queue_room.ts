import { jetstreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { CONTENT_INLINE_MAX_BYTES, OBJ_OUTBOUND_CONTENT, STREAM_OUTBOUND, inlineLimit } from '../../protocol/mod.ts'
import { StreamRoomWatch, streamsAtAdmissionLimit } from '../../stores/clients/mod.ts'

/** The streams a send writes to: the outbound queue, and the object store of large messages' content. */
const SEND_STREAMS = [STREAM_OUTBOUND, `OBJ_${OBJ_OUTBOUND_CONTENT}`]

/**
 * Readiness probe "JetStream store full": true while a stream a send writes to is at its admission limit (three
 * quarters of its `max_bytes`, its share of OB_NATS_STORE_MB; protocol/store_budget.ts) or has less room below it
 * than one queued message of the largest size kept whole, so sends are being, or are about to be, refused with
 * 503 `queue_full`. It turns false again as delivery frees room. A stream that does not exist yet (the content
 * bucket is made on first use) has room.
 */
export async function jetStreamStoreFull (nc: NatsConnection): Promise<boolean> {
  const jsm = await jetstreamManager(nc, { checkAPI: false })
  return await streamsAtAdmissionLimit(jsm, SEND_STREAMS, sendHeadroom(nc))
}

/** The largest queued message kept whole: a stream with less room than this below its limit takes no send. */
export function sendHeadroom (nc: NatsConnection): number {
  return inlineLimit(nc.info?.max_payload ?? CONTENT_INLINE_MAX_BYTES * 2)
}

/** The send path's admission checks, one per stream a send writes to (made and stopped by the send service). */
export function sendRoomWatches (nc: NatsConnection): { queue: StreamRoomWatch, content: StreamRoomWatch } {
  const headroom = sendHeadroom(nc)
  return {
    queue: new StreamRoomWatch(nc, [STREAM_OUTBOUND], headroom),
    content: new StreamRoomWatch(nc, [`OBJ_${OBJ_OUTBOUND_CONTENT}`], headroom)
  }
}
