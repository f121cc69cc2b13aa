import { createHash } from 'node:crypto'
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, DiscardPolicy, AckPolicy, type JetStreamClient, type JetStreamManager, type StreamConfig } from '@nats-io/jetstream'
import { Objm, setSha256Backend, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM_INBOUND, INBOUND_SUBJECTS, OBJ_INBOUND_RAW, CONSUMER_INBOUND, ensureStream, JsPublisher } from '../protocol/mod.ts'

const NS_PER_MS = 1_000_000
/** A job republished with the same message id inside this window (an SMTP client retrying after a lost 250) is dropped. */
export const INBOUND_DUPLICATE_WINDOW_MS = 10 * 60_000 // 10 min
/**
 * Raw messages are deleted once processed; the TTL only bounds what a crash between storing a message and
 * publishing its job leaves behind (the sender got 451 and retries, so nothing is lost).
 */
export const INBOUND_RAW_TTL_MS = 7 * 24 * 3600_000 // 7 days
/** A job is redelivered after this long without an ack; processing one message takes well under a second. */
export const INBOUND_ACK_WAIT_MS = 60_000
export const INBOUND_MAX_DELIVER = 10
/** Largest job message; a raw message that fits in it with its job travels inside the job (`storeInline`). */
export const INBOUND_JOB_MAX_BYTES = 64 * 1024

export function inboundStreamConfig (replicas: number): Partial<StreamConfig> & { name: string, subjects: string[] } {
  return {
    name: STREAM_INBOUND,
    subjects: [INBOUND_SUBJECTS],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: replicas,
    duplicate_window: INBOUND_DUPLICATE_WINDOW_MS * NS_PER_MS,
    discard: DiscardPolicy.Old,
    max_msg_size: INBOUND_JOB_MAX_BYTES
  }
}

export interface InboundStores {
  js: JetStreamClient
  /** Publishes (jobs, chunks, events) that wait for their PubAck without a request per message. */
  pub: JsPublisher
  jsm: JetStreamManager
  raw: ObjectStore
}

/**
 * Reads a stored message. A message up to one chunk (128 KB, nearly all mail) is read with a single direct get
 * of its chunk (object store layout: stream `OBJ_<bucket>`, chunks on `$O.<bucket>.C.<nuid>`), checked against the
 * object's SHA-256 digest. `getBlob` would create and delete a consumer per read, which costs the server more
 * than the rest of the processing. Larger messages go through `getBlob`.
 */
export async function readRaw (stores: InboundStores, name: string): Promise<Buffer | null> {
  const info = await stores.raw.info(name)
  if (info === null || info.deleted) return null
  if (info.chunks === 1 && info.digest.startsWith('SHA-256=')) {
    const m = await stores.jsm.streams.getMessage(`OBJ_${OBJ_INBOUND_RAW}`, { last_by_subj: `$O.${OBJ_INBOUND_RAW}.C.${info.nuid}` })
    if (m !== null) {
      const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength)
      const digest = createHash('sha256').update(data).digest()
      const expected = Buffer.from(info.digest.slice('SHA-256='.length).replace(/\+/g, '-').replace(/\//g, '_'), 'base64url')
      if (digest.equals(expected)) return data
    }
  }
  const blob = await stores.raw.getBlob(name)
  return blob === null ? null : Buffer.from(blob.buffer, blob.byteOffset, blob.byteLength)
}

/** Creates (or updates) the inbound job stream, its durable consumer and the raw-message bucket. */
export async function ensureInboundStreams (nc: NatsConnection, replicas: number): Promise<InboundStores> {
  const jsm = await jetstreamManager(nc)
  await ensureStream(jsm, inboundStreamConfig(replicas))
  const consumer = {
    durable_name: CONSUMER_INBOUND,
    ack_policy: AckPolicy.Explicit,
    ack_wait: INBOUND_ACK_WAIT_MS * NS_PER_MS,
    max_deliver: INBOUND_MAX_DELIVER,
    backoff: [1_000, 5_000, 30_000, 60_000].map((ms) => ms * NS_PER_MS)
  }
  try {
    await jsm.consumers.info(STREAM_INBOUND, CONSUMER_INBOUND)
  } catch {
    await jsm.consumers.add(STREAM_INBOUND, consumer)
  }
  // Node's own SHA-256 for object digests instead of the library's portable pure-JS default.
  setSha256Backend('native')
  const raw = await new Objm(nc).create(OBJ_INBOUND_RAW, {
    replicas,
    storage: StorageType.File,
    ttl: INBOUND_RAW_TTL_MS * NS_PER_MS,
    description: 'Raw inbound messages awaiting processing'
  })
  return { js: jetstream(nc), pub: new JsPublisher(nc), jsm, raw }
}
