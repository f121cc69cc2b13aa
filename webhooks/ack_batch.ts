import { TurnBatch } from '../stores/batching/mod.ts'

/**
 * Acknowledgements are gathered for a few milliseconds and sent together. nats.js writes its buffer to the
 * socket once per microtask checkpoint, and attempts finish a few per socket read, so acknowledging at once
 * costs one socket write per handful of events (measured: NATS socket writes were a tenth of the engine's
 * CPU on the webhook path). A message acknowledged a few milliseconds later is not delivered again: the
 * consumers' ack wait is the request timeout plus 30 s.
 */
const ACK_FLUSH_MS = 5

/** What can be acknowledged: a JetStream message, or the settle of one job of a batch message. */
export interface Ackable { ack: () => void }

/**
 * The acknowledgements of one webhook delivery (fan-out and job consumers), gathered for ACK_FLUSH_MS. Made and
 * closed by whoever starts the delivery, before the NATS connection is drained, so none is left behind.
 */
export class AckBatch {
  private readonly batch = new TurnBatch<Ackable, undefined>({
    after: ACK_FLUSH_MS,
    flush: async (acks) => { for (const m of acks) m.ack(); return NO_RESULTS }
  })

  private closed = false

  /** Acknowledges `m` within ACK_FLUSH_MS, together with the others of that moment; at once after close(). */
  add (m: Ackable): void {
    if (this.closed) m.ack()
    else this.batch.push(m)
  }

  /** Sends every pending acknowledgement now. */
  flush (): void {
    this.batch.flush()
  }

  /** Sends what is pending; an attempt that settles later (past the drain's deadline) leaves no timer behind. */
  close (): void {
    this.closed = true
    this.batch.flush()
  }
}

/** Acknowledgements have no results: nobody waits for one. */
const NO_RESULTS: readonly undefined[] = []
