import type { JetStreamClient, JsMsg, ConsumerMessages } from '@nats-io/jetstream'
import type { Logger } from 'pino'
import { STREAM_INBOUND, CONSUMER_INBOUND } from '../../protocol/mod.ts'
import type { InboundProcessor } from './processor.ts'
import { decodeJob, type InboundJob } from './job.ts'
import { AnalysisUnavailable } from './analysis_pool.ts'

/**
 * Messages in flight per process. Most of a message's time is waiting (object store, DNS, publishes); the CPU part
 * runs on the analysis pool's threads. More throughput: run more `OB_ROLE=inbound` processes; they share the consumer.
 */
export const INBOUND_CONCURRENCY = 32
const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 60_000]
/**
 * A job whose processing fails at its 10th delivery or later is given up. Not when the analysis threads failed:
 * that is no fault of the message, which comes back until they work again (for as long as a stored message is kept:
 * the consumer's `max_deliver`, protocol/jetstream_table.ts).
 */
export const INBOUND_MAX_ATTEMPTS = 10

export interface InboundConsumer {
  stop: (timeoutMs: number) => Promise<void>
}

/** `retryDelaysMs` replaces the waits before a failed job comes back (by attempt, the last repeats); only tests set it. */
export async function startInboundConsumer (js: JetStreamClient, processor: InboundProcessor, log: Logger, retryDelaysMs: readonly number[] = RETRY_DELAYS_MS): Promise<InboundConsumer> {
  const consumer = await js.consumers.get(STREAM_INBOUND, CONSUMER_INBOUND)
  const messages: ConsumerMessages = await consumer.consume({ max_messages: INBOUND_CONCURRENCY })
  const inFlight = new Set<Promise<void>>()

  async function handle (m: JsMsg): Promise<void> {
    let job: InboundJob
    let raw: Buffer | undefined
    try {
      ({ job, raw } = decodeJob(m.data))
    } catch (err) {
      log.error({ err, seq: m.seq }, 'malformed inbound job; dropped')
      m.term('malformed job')
      return
    }
    try {
      await processor.handle(job, raw)
      m.ack()
    } catch (err) {
      const attempt = m.info.deliveryCount
      const delayMs = retryDelaysMs[Math.min(attempt - 1, retryDelaysMs.length - 1)]
      if (err instanceof AnalysisUnavailable) {
        log.warn({ err, id: job.id, attempt }, 'inbound message not analysed (the analysis threads failed); will retry')
        m.nak(delayMs)
      } else if (attempt >= INBOUND_MAX_ATTEMPTS) {
        log.error({ err, id: job.id, attempt }, 'inbound message could not be processed; giving up')
        m.term('processing failed')
      } else {
        log.warn({ err, id: job.id, attempt }, 'inbound message processing failed; will retry')
        m.nak(delayMs)
      }
    }
  }

  const loop = (async () => {
    for await (const m of messages) {
      const p = handle(m).finally(() => inFlight.delete(p))
      inFlight.add(p)
      // max_messages already bounds what the server hands us; this keeps the local backlog to the same size.
      if (inFlight.size >= INBOUND_CONCURRENCY) await Promise.race(inFlight)
    }
  })()

  return {
    async stop (timeoutMs) {
      await messages.close().catch(() => {})
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref())
      await Promise.race([Promise.all([loop, ...inFlight]), deadline])
    }
  }
}
