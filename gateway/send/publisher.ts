import { createInbox, headers, type Msg, type NatsConnection } from '@nats-io/transport-node'
import { HDR_MSG_ID } from '../../engine/protocol/mod.ts'

/** JetStream did not confirm a publish: no PubAck in time, no stream, a stream error or no connection. */
export class PublishError extends Error {
  readonly code = 'publish_failed'
  constructor (message: string, opts?: ErrorOptions) {
    super(message, opts)
    this.name = 'PublishError'
  }
}

/** The encoded message is larger than the NATS server accepts (`max_payload`). */
export class PayloadTooLargeError extends Error {
  readonly code = 'payload_too_large'
  constructor (readonly size: number, readonly limit: number) {
    super(`the message is ${size} bytes; the NATS server accepts at most ${limit}`)
    this.name = 'PayloadTooLargeError'
  }
}

export interface PubAck { stream: string, seq: number, duplicate: boolean }

interface PubAckJson { stream?: string, seq?: number, duplicate?: boolean, error?: { code?: number, err_code?: number, description?: string } }

interface Pending { resolve: (ack: PubAck) => void, reject: (err: PublishError) => void, subject: string, deadline: number }

/**
 * Publishes to a JetStream subject as a plain NATS request and reads the PubAck itself. The JetStream client's
 * `publish()` does the same round trip with far more bookkeeping; and instead of `nc.request()`, which builds
 * two Error objects (for their stack traces) and a timer per call, replies come to one wildcard inbox
 * subscription and one sweep enforces the timeout. On the send path this is most of the gateway's NATS cost.
 * `Nats-Msg-Id` makes JetStream drop a re-publish of the same id within the duplicate window.
 */
export class OutboundPublisher {
  private readonly inbox = createInbox()
  private readonly pending = new Map<string, Pending>()
  private next = 0
  private readonly sweeper: NodeJS.Timeout

  constructor (private readonly nc: NatsConnection, private readonly timeoutMs: number) {
    nc.subscribe(`${this.inbox}.*`, { callback: (_err, msg) => { this.settle(msg) } })
    // Late by at most a tenth of the timeout, which is cheaper than a timer per request.
    this.sweeper = setInterval(() => { this.expire() }, Math.max(10, Math.min(100, Math.floor(timeoutMs / 10))))
    this.sweeper.unref()
    void nc.closed().then(() => {
      clearInterval(this.sweeper)
      for (const [token, p] of this.pending) {
        this.pending.delete(token)
        p.reject(new PublishError(`no PubAck for ${p.subject}: the NATS connection is closed`))
      }
    })
  }

  /** Throws PayloadTooLargeError before sending when `data` exceeds the server's limit. */
  checkSize (data: Uint8Array): void {
    const limit = this.nc.info?.max_payload
    if (limit !== undefined && data.byteLength > limit) throw new PayloadTooLargeError(data.byteLength, limit)
  }

  /** Resolves once the stream has stored the message; rejects with PublishError otherwise. */
  async publish (subject: string, msgId: string, data: Uint8Array): Promise<PubAck> {
    this.checkSize(data)
    const h = headers()
    h.set(HDR_MSG_ID, msgId)
    const token = (this.next++).toString(36)
    return await new Promise<PubAck>((resolve, reject) => {
      this.pending.set(token, { resolve, reject, subject, deadline: Date.now() + this.timeoutMs })
      try {
        this.nc.publish(subject, data, { headers: h, reply: `${this.inbox}.${token}` })
      } catch (err) {
        this.pending.delete(token)
        reject(new PublishError(`cannot publish to ${subject}: ${(err as Error).message}`, { cause: err }))
      }
    })
  }

  private settle (msg: Msg): void {
    const token = msg.subject.slice(this.inbox.length + 1)
    const p = this.pending.get(token)
    if (p === undefined) return // answered after its timeout
    this.pending.delete(token)
    if (msg.data.length === 0 && msg.headers?.code === 503) {
      p.reject(new PublishError(`no stream listens on ${p.subject}`))
      return
    }
    let ack: PubAckJson
    try {
      ack = JSON.parse(msg.string()) as PubAckJson
    } catch (err) {
      p.reject(new PublishError(`unreadable PubAck for ${p.subject}`, { cause: err }))
      return
    }
    if (ack.error !== undefined || typeof ack.seq !== 'number' || typeof ack.stream !== 'string') {
      p.reject(new PublishError(`JetStream refused the message on ${p.subject}: ${ack.error?.description ?? 'no sequence in the reply'} (${ack.error?.err_code ?? ack.error?.code ?? '?'})`))
      return
    }
    p.resolve({ stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate === true })
  }

  private expire (): void {
    if (this.pending.size === 0) return
    const now = Date.now()
    // Insertion order is publish order and every entry has the same timeout, so expired ones come first.
    for (const [token, p] of this.pending) {
      if (p.deadline > now) break
      this.pending.delete(token)
      p.reject(new PublishError(`no PubAck for ${p.subject} within ${this.timeoutMs} ms`))
    }
  }
}
