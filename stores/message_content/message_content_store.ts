import { promisify } from 'node:util'
import { gunzip, gzip, gzipSync } from 'node:zlib'
import { headers as natsHeaders } from '@nats-io/transport-node'
import type { JetStreamManager } from '@nats-io/jetstream'
import { STREAM_MESSAGE_CONTENT, messageContentSubject, type SentAttachment, type SentContent } from '../../protocol/mod.ts'
import type { JsPublish } from '../clients/mod.ts'

const gzipAsync = promisify(gzip)
const gunzipAsync = promisify(gunzip)

/** One attachment as it was sent (protocol/sent_content.ts). */
export type AttachmentInfo = SentAttachment

/** A message as it was rendered for sending (protocol/sent_content.ts). */
export type MessageContent = SentContent

/**
 * Compressed parts are cut at this size, far below any NATS server's `max_payload` (1 MB stock); nearly every
 * message's content compresses into a single part, so recording it is one publish.
 */
export const CONTENT_PART_BYTES = 128 * 1024
const HDR_PARTS = 'Ob-Content-Parts'
/**
 * Records up to this size (nearly every message's) are compressed in place. For a record of a few KB the
 * asynchronous call costs about four times the CPU of the compression itself (a zlib stream per call and a hand-off
 * to libuv's pool: 169 against 44 µs for 8 KB on this project's 2-core machine), while compressing 64 KB in place
 * holds the event loop for about a quarter of a millisecond. Larger ones go to the pool, off the event loop.
 */
const COMPRESS_IN_PLACE_BYTES = 64 * 1024
/** More parts than the largest message (10 MB, stored uncompressed at worst) can have: a header past it is not ours. */
const MAX_PARTS = 128

/**
 * The rendered content of messages (GET /v1/messages/{id}/content), in the stream `OB_MESSAGE_CONTENT`: the
 * record's JSON, gzip-compressed, on `ob.content.<id>`; when the compressed record is over CONTENT_PART_BYTES, its
 * first part there with a header `Ob-Content-Parts: <n>` and the others on `ob.content.<id>.1` … `.<n-1>`,
 * published before the first. One message per subject (a rewrite replaces), read by direct get, gone after the
 * stream's `max_age` (OB_MESSAGE_CONTENT_RETENTION_DAYS, at most the message record's 30 days). Attachment bytes
 * are never stored here. The engine writes, the gateway reads; this module is the only one that knows the layout.
 */
export class MessageContentStore {
  constructor (private readonly jsm: JetStreamManager, private readonly pub?: JsPublish) {}

  /**
   * Records `content`; resolves once JetStream acknowledged every part. No message id: a second write (a retried
   * publish, a later delivery) replaces the first, one message per subject, and since a message's content view is
   * always the same bytes, a reader that meets parts of both still reads the record.
   */
  async put (content: MessageContent): Promise<void> {
    if (this.pub === undefined) throw new Error('this message content store is read-only')
    const record = Buffer.from(JSON.stringify(content))
    const packed = record.length <= COMPRESS_IN_PLACE_BYTES ? gzipSync(record) : await gzipAsync(record)
    const parts: Buffer[] = []
    for (let at = 0; at < packed.length; at += CONTENT_PART_BYTES) parts.push(packed.subarray(at, at + CONTENT_PART_BYTES))
    const pub = this.pub
    // the further parts land before the first, so a reader that finds the first finds them all
    await Promise.all(parts.slice(1).map(async (p, i) => await pub.publish(messageContentSubject(content.id, i + 1), p)))
    const h = natsHeaders()
    h.set(HDR_PARTS, String(parts.length))
    await pub.publish(messageContentSubject(content.id), parts[0] ?? Buffer.alloc(0), { headers: h })
  }

  /**
   * Deletes the recorded content of each message (every part), for an erase: resolves with how many messages had
   * content recorded. A purge by subject removes the stream messages outright, leaving nothing on the subject.
   */
  async erase (ids: readonly string[]): Promise<number> {
    let erased = 0
    for (const id of ids) {
      const [first, rest] = await Promise.all([
        this.jsm.streams.purge(STREAM_MESSAGE_CONTENT, { filter: messageContentSubject(id) }),
        this.jsm.streams.purge(STREAM_MESSAGE_CONTENT, { filter: `${messageContentSubject(id)}.>` })
      ])
      if (first.purged + rest.purged > 0) erased++
    }
    return erased
  }

  /** Whether content of message `id` is recorded. */
  async has (id: string): Promise<boolean> {
    return await this.jsm.direct.getMessage(STREAM_MESSAGE_CONTENT, { last_by_subj: messageContentSubject(id) }) !== null
  }

  /** The recorded content of message `id`; null when none is (not recorded yet, or older than the stream's `max_age`). */
  async get (id: string): Promise<MessageContent | null> {
    const first = await this.jsm.direct.getMessage(STREAM_MESSAGE_CONTENT, { last_by_subj: messageContentSubject(id) })
    if (first === null) return null
    const count = Number(first.header.get(HDR_PARTS) || '1')
    if (!Number.isInteger(count) || count < 1 || count > MAX_PARTS) return null
    const rest = await Promise.all(Array.from({ length: Math.max(0, count - 1) }, async (_v, i) =>
      await this.jsm.direct.getMessage(STREAM_MESSAGE_CONTENT, { last_by_subj: messageContentSubject(id, i + 1) })))
    // a part that expired before the first (published a moment earlier) leaves the record unreadable, as gone
    if (rest.some((m) => m === null)) return null
    const packed = Buffer.concat([first.data, ...rest.map((m) => m!.data)])
    return JSON.parse((await gunzipAsync(packed)).toString('utf8')) as MessageContent
  }
}
