import type { JetStreamClient, JsMsg, ConsumerMessages } from '@nats-io/jetstream'
import type { Logger } from 'pino'
import { STREAM_INBOUND, CONSUMER_INBOUND, decodeJob, type InboundJob } from '../protocol/mod.ts'
import type { InboundProcessor } from './processor.ts'
import { AnalysisUnavailable } from './analysis_pool.ts'

/**
 * Messages in flight per process. Most of a message's time is waiting (object store, DNS, publishes); the CPU part
 * runs on the analysis pool's threads. More throughput: run more `OB_ROLE=inbound` processes; they share the consumer.
 */
export const INBOUND_CONCURRENCY = 32
const RETRY_DELAYS_MS = [1_000, 5_000, 30_000, 60_000]
/**
 * While a job is processed it reports progress this often. The consumer's first ack wait is 1 s (its backoff's first
 * step) and a message's SPF, DKIM and DMARC look-ups can take longer when the sender's name servers are slow; without
 * progress the server would hand the job out again meanwhile and the message would be processed twice or more.
 */
const WORKING_EVERY_MS = 300
/** An empty pull ends after this long and another is made (also how soon a stop is noticed while idle). */
const FETCH_EXPIRES_MS = 5_000
/** A pull that failed (NATS unavailable) is made again after this long. */
const FETCH_RETRY_MS = 1_000
/**
 * A job whose processing fails at its 10th delivery or later is ended: each route gets an `inbound.received` that
 * carries the envelope, `processing_error` and the raw message's reference (InboundProcessor.endUnprocessable). Not
 * when the analysis threads failed: that is no fault of the message, which comes back until they work again (for as
 * long as a stored message is kept: the consumer's `max_deliver`, protocol/jetstream_table.ts).
 */
export const INBOUND_MAX_ATTEMPTS = 10

export interface InboundConsumer {
  stop: (timeoutMs: number) => Promise<void>
}

/** `retryDelaysMs` replaces the waits before a failed job comes back (by attempt, the last repeats); only tests set it. */
export async function startInboundConsumer (
  js: JetStreamClient, processor: InboundProcessor, log: Logger, retryDelaysMs: readonly number[] = RETRY_DELAYS_MS
): Promise<InboundConsumer> {
  const consumer = await js.consumers.get(STREAM_INBOUND, CONSUMER_INBOUND)
  const inFlight = new Set<Promise<void>>()
  let stopping = false
  let batch: ConsumerMessages | undefined

  async function handle (m: JsMsg): Promise<void> {
    let job: InboundJob
    let raw: Buffer | undefined
    try {
      ({ job, raw } = decodeJob(m.data))
    } catch (err) {
      log.error({ err, seq: m.seq }, 'malformed inbound job; dropped')
      m.term() // without a reason, which nats-server 2.9 would not recognise
      return
    }
    const progress = setInterval(() => { m.working() }, WORKING_EVERY_MS)
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
        // Ended with an event for every route (envelope, reason, the raw message); if even that fails, tried again.
        try {
          await processor.endUnprocessable(job, raw, errorText(err))
          log.error({ err, id: job.id, attempt },
            'inbound message could not be processed; its routes got inbound.received with processing_error')
          m.ack()
        } catch (endErr) {
          log.warn({ err: endErr, id: job.id, attempt }, 'ending an unprocessable inbound message failed; will retry')
          m.nak(delayMs)
        }
      } else {
        log.warn({ err, id: job.id, attempt }, 'inbound message processing failed; will retry')
        m.nak(delayMs)
      }
    } finally {
      clearInterval(progress)
    }
  }

  // Jobs are pulled only for free slots, so every job this process holds is being processed (and reports progress).
  // A standing consume() pulls again as soon as its messages arrive, whatever is still being processed: in a burst
  // its buffer would hold jobs past their 1 s ack wait, and the server would hand them out again.
  const loop = (async () => {
    while (!stopping) {
      if (inFlight.size >= INBOUND_CONCURRENCY) { await Promise.race(inFlight); continue }
      try {
        batch = await consumer.fetch({ max_messages: INBOUND_CONCURRENCY - inFlight.size, expires: FETCH_EXPIRES_MS })
        for await (const m of batch) {
          const p = handle(m).finally(() => inFlight.delete(p))
          inFlight.add(p)
        }
      } catch (err) {
        if (stopping) break
        log.warn({ err }, 'pulling inbound jobs failed; trying again')
        await new Promise((resolve) => setTimeout(resolve, FETCH_RETRY_MS))
      }
    }
  })()

  return {
    async stop (timeoutMs) {
      stopping = true
      await batch?.close().catch(() => {})
      const deadline = new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref())
      await Promise.race([Promise.all([loop, ...inFlight]), deadline])
    }
  }
}

/** What failed, for `processing_error`: the error's code when it has one, and its message. */
function errorText (err: unknown): string {
  if (!(err instanceof Error)) return String(err)
  const code = (err as { code?: unknown }).code
  return typeof code === 'string' ? `${code}: ${err.message}` : err.message
}
