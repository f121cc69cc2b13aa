import { ContentMismatchError, joinContent, type QueuedMessage } from '../protocol/mod.ts'
import type { ContentStore } from '../stores/content/mod.ts'
import { MessageProcessor, type Fate, type ProcessorDeps } from './process_message.ts'
import { decodeQueued } from './queued_ingress.ts'

const enc = new TextEncoder()

/**
 * Delivery of messages whose content is stored apart (`content_ref`, protocol/queued_content.ts): the content is
 * read once per delivery of the stream message, before anything else, and the whole message is then delivered
 * exactly as one that carried its content. The object is deleted once the message is done with (every recipient
 * has its final outcome, or it was canceled), never when a copy of it is dropped; the acknowledgement comes after the delete, so an engine
 * that dies in between finds the message again, sees every outcome recorded, and only acknowledges it.
 */
export class StoredContentProcessor extends MessageProcessor {
  constructor (d: ProcessorDeps, private readonly content: ContentStore) {
    super(d)
  }

  override async process (shard: number, data: Uint8Array, deliveryCount = 2, seq = 0, wake?: string): Promise<Fate> {
    const msg = withReference(data)
    if (msg === undefined) return await super.process(shard, data, deliveryCount, seq, wake)
    const stored = await this.content.get(msg.id)
    if (stored === null) {
      // deleted by a delivery that ended before its acknowledgement, or expired: never deliver without content
      if (await super.settleIfFinal(data)) return { kind: 'ack' }
      const reason = 'the stored content of the message is gone (expired past the retry span)'
      return await this.endUnsendable(msg, seq, 'content_unavailable', reason)
    }
    let joined: unknown
    try {
      joined = joinContent(msg, stored)
    } catch (err) {
      // never deliver content other than what was accepted
      if (!(err instanceof ContentMismatchError)) throw err
      joined = undefined
    }
    const fate = joined === undefined
      ? await this.endUnsendable(msg, seq, 'content_unavailable', 'the stored content of the message does not match its reference')
      : await super.process(shard, enc.encode(JSON.stringify(joined)), deliveryCount, seq, wake)
    // only once the message is done with: a dropped copy of a rescheduled message leaves it to the copy that goes on
    if (fate.kind === 'ack') await this.content.delete(msg.id)
    return fate
  }

  override async settleIfFinal (data: Uint8Array): Promise<boolean> {
    const settled = await super.settleIfFinal(data)
    const msg = settled ? withReference(data) : undefined
    if (msg !== undefined) await this.content.delete(msg.id)
    return settled
  }
}

const REF_KEY = Buffer.from('"content_ref":')

/**
 * The message when it is a readable one with stored content; anything else goes the ordinary way. Nearly every
 * message carries its content, and the key cannot occur unescaped inside a JSON string, so one byte search spares
 * them a second decode.
 */
function withReference (data: Uint8Array): QueuedMessage | undefined {
  if (Buffer.from(data.buffer, data.byteOffset, data.byteLength).indexOf(REF_KEY) === -1) return undefined
  const msg = decodeQueued(data)
  return typeof msg !== 'string' && msg.content_ref !== undefined ? msg : undefined
}
