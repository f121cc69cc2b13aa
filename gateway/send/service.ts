import {
  ApiError, outboundSubject, shardOf, streamOf, streamPausedError, type QueuedMessage, type SendRequest, type BatchRequest
} from '../../protocol/mod.ts'
import { JsPublisher, PayloadTooLargeError, PublishRejectedError, PublishTimeoutError, isJetStreamFull } from '../../stores/clients/mod.ts'
import type { GatewayDeps } from '../deps.ts'
import type { Reply, RequestContext } from '../http/route.ts'
import { idempotent, type IdempotentOptions } from '../idempotency/mod.ts'
import { ReadModelWriter } from './read_model_writer.ts'
import { LargeContent, NOT_CONFIRMED, queueFullError, type EncodedMessage } from './large_content.ts'
import { sendRoomWatches } from '../health/queue_room.ts'
import type { StreamRoomWatch } from '../../stores/clients/mod.ts'
import { Problems, isPrepared, prepareMessage, type AllSuppressed, type PreparedMessage, type SendStatus } from './prepare.ts'

export interface SendResult { id: string, status: SendStatus, created_at: string, suppressed?: string[] }

/** Maps the typed errors of the publish boundary to the documented API errors. */
function toApiError (err: unknown): ApiError {
  if (err instanceof ApiError) return err
  if (err instanceof PayloadTooLargeError) {
    return new ApiError('payload_too_large', `The message is ${err.size} bytes encoded; the message store accepts at most ${err.limit}.`, {
      cause: err
    })
  }
  if (err instanceof PublishRejectedError && isJetStreamFull(err)) return queueFullError(err)
  if (err instanceof PublishTimeoutError || err instanceof PublishRejectedError) {
    return new ApiError('service_unavailable', NOT_CONFIRMED, { cause: err, retryAfter: 1 })
  }
  return ApiError.from(err)
}

/**
 * Under an Idempotency-Key, the handlers' failures are answered as the documented API errors: a failed publish
 * (`service_unavailable`, `queue_full`) keeps the message ids for the retry, any other failure frees the key.
 */
const PUBLISH_ERRORS: IdempotentOptions = { toError: toApiError }

function result (p: PreparedMessage): SendResult {
  const r: SendResult = { id: p.msg.id, status: p.status, created_at: p.msg.created_at }
  if (p.msg.suppressed.length > 0) r.suppressed = p.msg.suppressed
  return r
}

/** What the send path uses of the gateway's shared dependencies. */
export type SendDeps = Pick<GatewayDeps, 'config' | 'log' | 'nc' | 'redis' | 'cp' | 'messages' | 'idempotency' | 'metrics'>

/**
 * The durable send path: prepare → publish to JetStream (202 only after the PubAck), with the optional
 * Idempotency-Key around it; the read-model record follows the reply, batched (ReadModelWriter). One instance per gateway,
 * made and closed by main.ts.
 */
export class SendService {
  private readonly publisher: JsPublisher
  private readonly readModel: ReadModelWriter
  private readonly large: LargeContent
  /** Sends stop at the queue's admission limit, below its `max_bytes` (protocol/store_budget.ts says why). */
  private readonly room: { queue: StreamRoomWatch, content: StreamRoomWatch }

  constructor (private readonly deps: SendDeps) {
    this.publisher = new JsPublisher(deps.nc, deps.config.nats.publishTimeoutMs)
    this.readModel = new ReadModelWriter(deps.messages, deps.log)
    this.large = new LargeContent(deps.nc, deps.config)
    this.room = sendRoomWatches(deps.nc)
    void this.room.queue.start()
    void this.room.content.start()
  }

  /**
   * Fails the publishes still waiting for their PubAck and drops the publisher's reply subscription; read-model
   * writes still gathered leave at once.
   */
  close (): void {
    this.room.queue.stop()
    this.room.content.stop()
    this.publisher.close()
    this.readModel.flush()
  }

  async send (ctx: RequestContext<SendRequest>, path: string): Promise<Reply> {
    return await idempotent(ctx, path, async ({ previous, retry }) => {
      const now = Date.now()
      const createdAt = previous?.created_at ?? new Date(now).toISOString()
      const problems = new Problems()
      const p = prepareMessage(ctx.body, ctx.auth, this.deps.cp, now, createdAt, '', problems, previous?.ids[0])
      problems.throwIfAny()
      if (!isPrepared(p)) {
        throw new ApiError('recipient_suppressed', undefined, { details: { suppressed: p!.suppressed } })
      }
      const data = this.encode(p.msg)
      retry.ids = [p.msg.id]
      retry.created_at = createdAt
      await this.publish(p.msg, data)
      this.record(p)
      return { status: 202, body: result(p) }
    }, PUBLISH_ERRORS)
  }

  async batch (ctx: RequestContext<BatchRequest>, path: string): Promise<Reply> {
    return await idempotent(ctx, path, async ({ previous, retry }) => {
      const now = Date.now()
      const createdAt = previous?.created_at ?? new Date(now).toISOString()
      const problems = new Problems()
      const items = ctx.body.messages.map((m, i) =>
        prepareMessage(m, ctx.auth, this.deps.cp, now, createdAt, `messages[${i}].`, problems, previous?.ids[i]))
      problems.throwIfAny()
      if (!items.some(isPrepared)) {
        throw new ApiError('recipient_suppressed', 'Every recipient of every message is on the suppression list.', {
          details: { suppressed: items.flatMap((p) => (p as AllSuppressed).suppressed) }
        })
      }
      // Every size is checked before anything is published, so a 413 leaves nothing half sent.
      const encoded = items.map((p) => isPrepared(p) ? this.encode(p.msg) : undefined)
      retry.ids = items.map((p) => isPrepared(p) ? p.msg.id : null)
      retry.created_at = createdAt
      const confirmedBefore = new Set(previous?.accepted ?? [])
      // Messages a failed attempt already got confirmed are not published again.
      const settled = await Promise.allSettled(items.map(async (p, index) => {
        if (isPrepared(p) && !confirmedBefore.has(index)) await this.publish(p.msg, encoded[index]!)
      }))
      const failed: number[] = []
      settled.forEach((s, index) => {
        if (s.status === 'rejected') failed.push(index)
        else if (isPrepared(items[index])) retry.accepted.push(index)
      })
      if (failed.length > 0) {
        const accepted = retry.accepted.map((index) => ({ index, id: (items[index] as PreparedMessage).msg.id }))
        for (const { index } of accepted) if (!confirmedBefore.has(index)) this.record(items[index] as PreparedMessage)
        const cause = (settled[failed[0]!] as PromiseRejectedResult).reason
        const err = toApiError(cause)
        const total = items.filter(isPrepared).length
        throw new ApiError(err.code, `${accepted.length} of ${total} messages were queued; the others were not (see details.failed).`, {
          cause, details: { accepted, failed }, ...(err.retryAfter !== undefined ? { retryAfter: err.retryAfter } : {})
        })
      }
      const data = items.map((p) =>
        isPrepared(p) ? result(p) : { id: null, status: 'suppressed', suppressed: (p as AllSuppressed).suppressed })
      const fresh = items.filter((p, index): p is PreparedMessage => isPrepared(p) && !confirmedBefore.has(index))
      for (const p of fresh) this.record(p)
      return { status: 202, body: { data } }
    }, PUBLISH_ERRORS)
  }

  /**
   * Publishes one message prepared elsewhere (SMTP submission) and records it: resolves once JetStream has it.
   * Throws the API errors of the HTTP send: `stream_paused`, `payload_too_large`, `queue_full`, `service_unavailable`.
   */
  async enqueue (p: PreparedMessage): Promise<void> {
    // the HTTP send checks this in prepareMessage; a submitted message is built elsewhere, so it is checked here
    const pause = p.msg.environment === 'live' ? this.deps.cp.pauses.paused(p.msg.org_id, streamOf(p.msg)) : undefined
    if (pause !== undefined) throw streamPausedError(pause)
    await this.publish(p.msg, this.encode(p.msg))
    this.record(p)
  }

  /** The message as published (a large one's content apart, see LargeContent); 413 when the NATS server would refuse its size. */
  private encode (msg: QueuedMessage): EncodedMessage {
    const encoded = this.large.encode(msg)
    try {
      this.publisher.checkSize(encoded.data)
    } catch (err) {
      throw toApiError(err)
    }
    return encoded
  }

  private async publish (msg: QueuedMessage, encoded: EncodedMessage): Promise<void> {
    const contentBytes = encoded.content?.length ?? 0
    if (!this.room.queue.hasRoomFor(encoded.data.length) || !this.room.content.hasRoomFor(contentBytes)) {
      throw queueFullError(new Error('the outbound queue is at its admission limit'))
    }
    if (encoded.content !== undefined) await this.large.put(msg.id, encoded.content)
    try {
      await this.publisher.publish(outboundSubject(shardOf(msg.id, this.deps.config.engine.shards)), encoded.data, { msgID: msg.id })
    } catch (err) {
      throw toApiError(err)
    }
    this.room.queue.noteWritten(encoded.data.length)
    this.room.content.noteWritten(contentBytes)
    this.deps.metrics.messagesQueued.inc()
  }

  /**
   * Hands the accepted message to the read-model writer; the reply does not wait for it. The message becomes
   * readable within milliseconds, well inside the documented second (read-after-write).
   */
  private record (p: PreparedMessage): void {
    this.readModel.add(p.msg, p.status)
  }
}
