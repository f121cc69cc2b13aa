import { createHash } from 'node:crypto'
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream'
import { Objm, setSha256Backend, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import {
  OBJ_INBOUND_RAW, inboundRawStoreOptions, jetStreamTable, objectStoreShareBytes, tablePart, type JetStreamSettings
} from '../protocol/mod.ts'
import { JsPublisher, ensureJetStream, ensureStoreShare } from '../stores/clients/mod.ts'

export { INBOUND_JOB_MAX_BYTES } from '../protocol/mod.ts'

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
export async function ensureInboundStreams (nc: NatsConnection, settings: JetStreamSettings): Promise<InboundStores> {
  const jsm = await jetstreamManager(nc)
  await ensureJetStream(jsm, tablePart(jetStreamTable(settings), 'inbound'))
  // Node's own SHA-256 for object digests instead of the library's portable pure-JS default.
  setSha256Backend('native')
  const raw = await new Objm(nc).create(OBJ_INBOUND_RAW, inboundRawStoreOptions(settings.replicas, settings.storeBytes))
  await ensureStoreShare(jsm, `OBJ_${OBJ_INBOUND_RAW}`, objectStoreShareBytes(settings.storeBytes, OBJ_INBOUND_RAW))
  return { js: jetstream(nc), pub: new JsPublisher(nc), jsm, raw }
}
