import { createHash } from 'node:crypto'
import { headers as natsHeaders } from '@nats-io/transport-node'
import { OBJ_INBOUND_RAW, inboundSubject, shardOf, HDR_MSG_ID, encodeJob, type InboundJob } from '../protocol/mod.ts'
import type { InboundStores } from './streams.ts'

/**
 * The fast path for nearly all mail: a message of at most one object-store chunk is written as the object store
 * itself lays objects out (stream `OBJ_<bucket>`, the chunk on `$O.<bucket>.C.<nuid>`, its metadata on
 * `$O.<bucket>.M.<base64url(name)>` with a subject rollup), so `ObjectStore.info/get/delete` keep working on it.
 * What the library's `put` does in four round trips one after the other (existence check, chunk, metadata, then
 * our job), this does in one: the three publishes go out together and their acknowledgements are awaited together.
 * The existence check is not needed, ids are never reused.
 */
export const RAW_CHUNK_BYTES = 128 * 1024
const RAW_STREAM = `OBJ_${OBJ_INBOUND_RAW}`
const SHA256 = 'SHA-256='
const enc = new TextEncoder()

/** A message still younger than this whose chunk is not readable yet is retried, not taken as processed. */
export const RAW_SETTLE_MS = 30_000

/** The chunk of a one-chunk message is named by the same token as its metadata, so one purge removes both. */
export function rawToken (name: string): string {
  const b = Buffer.from(name).toString('base64url')
  return b + '='.repeat((4 - b.length % 4) % 4)
}

const chunkSubject = (token: string): string => `$O.${OBJ_INBOUND_RAW}.C.${token}`
const metaSubject = (token: string): string => `$O.${OBJ_INBOUND_RAW}.M.${token}`

/**
 * Stores a one-chunk message and publishes its job; resolves once JetStream acknowledged all three. On a failure
 * what may have landed is purged (best effort); a job that did land then finds no message and is dropped.
 */
export async function storeSmall (stores: InboundStores, data: Buffer, job: InboundJob, jobShards: number): Promise<void> {
  const token = rawToken(job.id)
  const digest = createHash('sha256').update(data).digest('base64url')
  const info = {
    name: job.id,
    description: '',
    options: { max_chunk_size: RAW_CHUNK_BYTES },
    bucket: OBJ_INBOUND_RAW,
    nuid: token,
    size: data.length,
    chunks: 1,
    mtime: new Date().toISOString(),
    digest: SHA256 + digest + '='.repeat((4 - digest.length % 4) % 4),
    deleted: false
  }
  const rollup = natsHeaders()
  rollup.set('Nats-Rollup', 'sub')
  const h = natsHeaders()
  h.set(HDR_MSG_ID, job.id)
  const withRaw: InboundJob = { ...job, raw: { token, sha256: digest } }
  const acks = await Promise.allSettled([
    stores.pub.publish(chunkSubject(token), data),
    stores.pub.publish(metaSubject(token), enc.encode(JSON.stringify(info)), { headers: rollup }),
    stores.pub.publish(inboundSubject(shardOf(job.id, jobShards)), enc.encode(JSON.stringify(withRaw)), { msgID: job.id, headers: h })
  ])
  const failed = acks.find((a) => a.status === 'rejected')
  if (failed !== undefined) {
    await deleteSmall(stores, token).catch(() => {})
    throw (failed as PromiseRejectedResult).reason
  }
}

/**
 * Room kept in a job message for its headers (message id) and JSON; what is left of the job stream's message size
 * limit is how large a message may be to travel inside its job.
 */
const INLINE_HEADROOM = 512

/** Whether `data` can be carried inside its job, on a job stream whose messages may be `maxMsgSize` bytes. */
export function fitsInline (data: Uint8Array, job: InboundJob, maxMsgSize: number): boolean {
  return data.length + INLINE_HEADROOM + Buffer.byteLength(JSON.stringify(job)) <= maxMsgSize
}

/**
 * The fastest path, for messages that fit in one job message (nearly all mail): the raw message is published
 * inside its job, so storing it is one publish and one acknowledgement, and processing it needs no read and no
 * delete (acknowledging the job removes it from the work queue).
 */
export async function storeInline (stores: InboundStores, data: Uint8Array, job: InboundJob, jobShards: number): Promise<void> {
  const h = natsHeaders()
  h.set(HDR_MSG_ID, job.id)
  await stores.pub.publish(inboundSubject(shardOf(job.id, jobShards)), encodeJob(job, data), { msgID: job.id, headers: h })
}

/** The message of a job stored by `storeSmall`, null once it was deleted (or never landed). */
export async function readSmall (stores: InboundStores, raw: NonNullable<InboundJob['raw']>): Promise<Buffer | null> {
  const m = await stores.jsm.direct.getMessage(RAW_STREAM, { last_by_subj: chunkSubject(raw.token) })
  if (m === null) return null
  const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength)
  if (createHash('sha256').update(data).digest('base64url') !== raw.sha256) throw new Error('stored message does not match its digest')
  return data
}

/** Removes the chunk and the metadata of a one-chunk message with one purge. */
export async function deleteSmall (stores: InboundStores, token: string): Promise<void> {
  await stores.jsm.streams.purge(RAW_STREAM, { filter: `$O.${OBJ_INBOUND_RAW}.*.${token}` })
}

/**
 * Messages this process stored a moment ago, kept in memory until its own processor takes them, which is usually
 * milliseconds later: the processor then skips reading back what it already has. A job taken by another process,
 * or retried, reads the store as before; entries older than `maxAgeMs`, or past `maxBytes`, are dropped.
 */
export class JustStored {
  private readonly entries = new Map<string, { data: Buffer, at: number }>()
  private bytes = 0

  constructor (private readonly maxBytes = 16 * 1024 * 1024, private readonly maxAgeMs = 10_000) {}

  put (id: string, data: Buffer): void {
    const now = Date.now()
    for (const [oldId, e] of this.entries) {
      if (now - e.at < this.maxAgeMs && this.bytes + data.length <= this.maxBytes) break
      this.drop(oldId, e.data)
    }
    if (this.bytes + data.length > this.maxBytes) return
    this.entries.set(id, { data, at: now })
    this.bytes += data.length
  }

  take (id: string): Buffer | undefined {
    const e = this.entries.get(id)
    if (e !== undefined) this.drop(id, e.data)
    return e?.data
  }

  private drop (id: string, data: Buffer): void {
    this.entries.delete(id)
    this.bytes -= data.length
  }
}
