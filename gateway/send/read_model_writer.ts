import type { Logger } from 'pino'
import type { QueuedMessage } from '../../protocol/mod.ts'
import type { MessageStore } from '../../stores/read_model/mod.ts'

/** How long an accepted message may wait for the read-model write: far inside the 1 s read-after-write bound. */
export const READ_MODEL_FLUSH_MS = 5 // 5 ms
/** Messages gathered before a write leaves without waiting for the timer. */
export const READ_MODEL_FLUSH_SIZE = 256

interface Accepted { msg: QueuedMessage, status: 'queued' | 'scheduled' }

/**
 * Writes accepted messages to the read model after their 202 has gone, many at a time: messages accepted within
 * a few milliseconds travel to Redis as one batched script instead of one write per request turn. The message
 * is already durable in JetStream, and the engine records it again from the queued message on delivery, so a
 * write this process never makes (it crashed) or that fails only delays the message becoming readable.
 */
export class ReadModelWriter {
  private pending: Accepted[] = []
  private timer: NodeJS.Timeout | undefined
  private readonly flushNow = (): void => { this.flush() }

  constructor (private readonly store: MessageStore, private readonly log: Logger) {}

  add (msg: QueuedMessage, status: 'queued' | 'scheduled'): void {
    this.pending.push({ msg, status })
    if (this.pending.length >= READ_MODEL_FLUSH_SIZE) this.flush()
    else this.timer ??= setTimeout(this.flushNow, READ_MODEL_FLUSH_MS)
  }

  /** Sends what is gathered now; the writes leave on the Redis connection ahead of anything issued later. */
  flush (): void {
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    const batch = this.pending
    if (batch.length === 0) return
    this.pending = []
    for (const { msg, status } of batch) {
      this.store.recordQueued(msg, status).catch((err: unknown) => {
        this.log.error({ err, messageId: msg.id }, 'recording a queued message failed; the engine records it on delivery')
      })
    }
  }
}
