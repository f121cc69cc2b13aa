import { jetstreamManager } from '@nats-io/jetstream'
import { Objm, setSha256Backend, type ObjectStore } from '@nats-io/obj'
import type { NatsConnection } from '@nats-io/transport-node'
import { StorageType } from '@nats-io/jetstream'
import { DEFAULT_NATS_STORE_MB, type Config } from '../../config/mod.ts'
import { MAX_SCHEDULE_AHEAD_MS, OBJ_OUTBOUND_CONTENT, objectStoreShareBytes } from '../../protocol/mod.ts'
import { ensureStoreShare } from '../clients/mod.ts'

const NS_PER_MS = 1_000_000

/**
 * The content of queued messages too large to travel inside their stream message (see `needsContentStore`): one
 * JetStream object per message, named by the message id, in the bucket `ob_outbound_content` (stream
 * `OBJ_ob_outbound_content`). The object store cuts an object into 128 KB chunks, so any NATS server takes it
 * whatever its `max_payload`. The engine deletes an object once every recipient of its message has its final
 * outcome; one that is never deleted (a message terminated by an operator) expires with the bucket's `max_age`.
 * This module is the only one that knows the bucket's name, layout and settings.
 */
export class ContentStore {
  private constructor (private readonly bucket: ObjectStore) {}

  /**
   * Creates the bucket when missing, or brings an existing one's `max_age` to `ttlMs` (the retry schedule may
   * have changed since it was made), and its `max_bytes` to its share of `storeBytes` (OB_NATS_STORE_MB in bytes;
   * a full bucket refuses new content, never drops content a queued message needs). Idempotent; every gateway
   * and engine calls it at start.
   */
  static async open (nc: NatsConnection, opts: { replicas: number, ttlMs: number, storeBytes?: number }): Promise<ContentStore> {
    const maxBytes = objectStoreShareBytes(opts.storeBytes ?? DEFAULT_NATS_STORE_MB * 1024 * 1024, OBJ_OUTBOUND_CONTENT)
    // Node's own SHA-256 for object digests: the library's portable pure-JS default takes seconds for 10 MB
    setSha256Backend('native')
    const bucket = await new Objm(nc).create(OBJ_OUTBOUND_CONTENT, {
      replicas: opts.replicas,
      storage: StorageType.File,
      ttl: opts.ttlMs * NS_PER_MS,
      description: 'Content of large queued messages, until every recipient has its final outcome',
      max_bytes: maxBytes
    })
    const jsm = await jetstreamManager(nc)
    const stream = `OBJ_${OBJ_OUTBOUND_CONTENT}`
    const info = await jsm.streams.info(stream)
    if (info.config.max_age !== opts.ttlMs * NS_PER_MS) await jsm.streams.update(stream, { max_age: opts.ttlMs * NS_PER_MS })
    await ensureStoreShare(jsm, stream, maxBytes)
    return new ContentStore(bucket)
  }

  /** Stores the content of message `id`; resolves once JetStream acknowledged every chunk and the metadata. */
  async put (id: string, data: Uint8Array): Promise<void> {
    await this.bucket.putBlob({ name: id }, data)
  }

  /** The content of message `id`, null when it was deleted, expired or never stored. */
  async get (id: string): Promise<Uint8Array | null> {
    const info = await this.bucket.info(id)
    if (info === null || info.deleted) return null
    return await this.bucket.getBlob(id)
  }

  /** Whether content of message `id` is stored. */
  async has (id: string): Promise<boolean> {
    const info = await this.bucket.info(id)
    return info !== null && !info.deleted
  }

  /** Removes the content of message `id` (its chunks at once; a small deletion marker expires with the bucket). */
  async delete (id: string): Promise<void> {
    if (await this.has(id)) await this.bucket.delete(id)
  }
}

/** The bucket as this installation's settings make it (see ContentStore.open). */
export async function openContentStore (nc: NatsConnection, config: Config): Promise<ContentStore> {
  return await ContentStore.open(nc, {
    replicas: config.nats.replicas,
    ttlMs: contentTtlMs(config.delivery.retryScheduleS, MAX_SCHEDULE_AHEAD_MS),
    storeBytes: config.nats.storeBytes
  })
}

/**
 * How long stored content is kept at most: the furthest a send may be scheduled ahead, plus the delivery retry
 * span (after which every recipient has its final outcome), plus an hour for attempts that come late. A reschedule
 * cannot take a message past 72 h after its acceptance (gateway/routes/messages_schedule_v1.ts), and the span counts
 * from the time it became due, so this covers the longest reschedule and retry span.
 */
export function contentTtlMs (retryScheduleS: readonly number[], maxScheduleAheadMs: number): number {
  return maxScheduleAheadMs + retryScheduleS.reduce((sum, s) => sum + s, 0) * 1000 + 3600_000
}
