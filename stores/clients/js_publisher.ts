import {
  createInbox, headers as natsHeaders, type MsgHdrs, type NatsConnection, type Msg, type Subscription
} from '@nats-io/transport-node'
import type { PubAck } from '@nats-io/jetstream'
import type { InternalErrorCode } from '../../protocol/mod.ts'

/** What `publishEvent` and the inbound store need of a JetStream client: a publish that resolves on the PubAck. */
export interface JsPublish {
  publish: (subject: string, data: Uint8Array, opts?: { msgID?: string, headers?: MsgHdrs }) => Promise<PubAck>
}

/** JetStream did not acknowledge the publish in time (or the connection dropped it); it may still have stored it. */
export class PublishTimeoutError extends Error {
  readonly code = 'publish_timeout' satisfies InternalErrorCode
  constructor (subject: string, timeoutMs: number) {
    super(`no acknowledgement for a publish to ${subject} within ${timeoutMs} ms`)
    this.name = 'PublishTimeoutError'
  }
}

/** JetStream refused the message (no stream for the subject, a limit, JetStream unavailable). */
export class PublishRejectedError extends Error {
  readonly code = 'publish_rejected' satisfies InternalErrorCode
  constructor (subject: string, readonly reason: string, readonly apiCode?: number) {
    super(`publish to ${subject} rejected: ${reason}`)
    this.name = 'PublishRejectedError'
  }
}

/** The encoded message is larger than the NATS server accepts (`max_payload`); nothing was sent. */
export class PayloadTooLargeError extends Error {
  readonly code = 'publish_too_large' satisfies InternalErrorCode
  constructor (readonly size: number, readonly limit: number) {
    super(`the message is ${size} bytes; the NATS server accepts at most ${limit}`)
    this.name = 'PayloadTooLargeError'
  }
}

interface Pending { subject: string, at: number, resolve: (a: PubAck) => void, reject: (e: Error) => void }

const dec = new TextDecoder()
const SWEEP_MS = 250

/**
 * JetStream publishes that wait for their PubAck on one long-lived reply subscription. The client's own
 * `js.publish` makes a request per message: a request object, a timer, a promise race and, once the answer is
 * in, an Error (with its stack) to cancel what already settled; on the inbound path that was a visible share of
 * the CPU per message. Here a publish is one map entry, and one sweep every 250 ms fails those past the timeout.
 * A publish is sent once (like `js.publish` without retries): the caller decides what a failure means. Every
 * failure is one of the three errors above.
 */
export class JsPublisher implements JsPublish {
  private readonly prefix: string
  private readonly pending = new Map<number, Pending>()
  private readonly sub: Subscription
  private next = 0
  private sweeper?: ReturnType<typeof setInterval>

  constructor (private readonly nc: NatsConnection, private readonly timeoutMs = 5000) {
    this.prefix = `${createInbox()}.`
    this.sub = nc.subscribe(`${this.prefix}*`, { callback: (err, m) => { if (err === null) this.answer(m) } })
  }

  /** Throws PayloadTooLargeError when `data` exceeds the connected server's limit. */
  checkSize (data: Uint8Array): void {
    const limit = this.nc.info?.max_payload
    if (limit !== undefined && data.byteLength > limit) throw new PayloadTooLargeError(data.byteLength, limit)
  }

  async publish (subject: string, data: Uint8Array, opts: { msgID?: string, headers?: MsgHdrs } = {}): Promise<PubAck> {
    this.checkSize(data)
    const token = ++this.next
    let headers = opts.headers
    if (opts.msgID !== undefined) {
      headers ??= natsHeaders()
      headers.set('Nats-Msg-Id', opts.msgID)
    }
    return await new Promise<PubAck>((resolve, reject) => {
      this.pending.set(token, { subject, at: Date.now(), resolve, reject })
      this.sweeper ??= setInterval(() => { this.sweep() }, SWEEP_MS)
      try {
        this.nc.publish(subject, data, { reply: this.prefix + String(token), ...(headers !== undefined ? { headers } : {}) })
      } catch (err) {
        // the connection is closed or draining
        this.pending.delete(token)
        reject(new PublishRejectedError(subject, (err as Error).message))
      }
    })
  }

  private answer (m: Msg): void {
    const token = Number(m.subject.slice(this.prefix.length))
    const p = this.pending.get(token)
    if (p === undefined) return // answered after its timeout
    this.pending.delete(token)
    // No responders: no stream listens on the subject (or JetStream is down).
    if (m.data.length === 0 && m.headers?.code === 503) { p.reject(new PublishRejectedError(p.subject, 'no responders', 503)); return }
    let ack: PubAck & { error?: { code?: number, err_code?: number, description?: string } }
    try {
      ack = JSON.parse(dec.decode(m.data))
    } catch {
      p.reject(new PublishRejectedError(p.subject, 'unreadable acknowledgement'))
      return
    }
    if (ack.error !== undefined) {
      p.reject(new PublishRejectedError(p.subject, ack.error.description ?? 'error', ack.error.err_code ?? ack.error.code))
      return
    }
    if (typeof ack.stream !== 'string' || ack.stream === '') {
      p.reject(new PublishRejectedError(p.subject, 'invalid acknowledgement'))
      return
    }
    ack.duplicate = ack.duplicate === true
    p.resolve(ack)
  }

  private sweep (): void {
    const limit = Date.now() - this.timeoutMs
    for (const [token, p] of this.pending) {
      // Entries are in publish order: the first one still in time ends the sweep.
      if (p.at > limit) break
      this.pending.delete(token)
      p.reject(new PublishTimeoutError(p.subject, this.timeoutMs))
    }
    if (this.pending.size === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
    }
  }

  /** Fails what is still waiting and drops the subscription. */
  close (): void {
    this.sub.unsubscribe()
    clearInterval(this.sweeper)
    this.sweeper = undefined
    for (const p of this.pending.values()) p.reject(new PublishTimeoutError(p.subject, this.timeoutMs))
    this.pending.clear()
  }
}
