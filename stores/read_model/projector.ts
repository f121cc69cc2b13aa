import { jetstream, type JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../../config/mod.ts'
import {
  CONSUMER_PROJECTOR, STREAM_EVENTS, EVENT_TYPES, jetStreamSettings, jetStreamTable, tablePart, type EventRecord
} from '../../protocol/mod.ts'
import { MessageStore, type RetentionOf } from './message_store.ts'
import { ensureJetStream } from '../clients/mod.ts'
import type { OutboxMetrics } from '../metrics/mod.ts'
import { ApplyBackoff } from './apply_backoff.ts'
import type { ReputationGuard } from '../reputation/mod.ts'

/** Events applied concurrently; Redis auto-pipelining turns them into few round trips. */
const CONCURRENCY = 256
/**
 * After a failed apply (Redis away or full) the projector waits, then tries one event; each failed try doubles the
 * wait, from 250 ms up to 30 s. Meanwhile it takes no other event, so a Redis that refuses writes for minutes sees a
 * try every 30 s, not every event every second.
 */
export const PROJECTOR_RETRY_FIRST_MS = 250
export const PROJECTOR_RETRY_MAX_MS = 30_000
/** An event held while the projector waits reports progress this often, so JetStream does not hand it out again. */
const HELD_PROGRESS_MS = 10_000
const TYPES = new Set<string>(EVENT_TYPES)

export interface Projector { stop: () => Promise<void> }

/** An event the read model can use; anything else is a poison message and is terminated, not retried. */
function parseEvent (m: JsMsg): EventRecord | undefined {
  try {
    const e = m.json<EventRecord>()
    if (typeof e.id !== 'string' || typeof e.org_id !== 'string' || typeof e.timestamp !== 'string' || !TYPES.has(e.type)) return undefined
    if (typeof e.data !== 'object' || e.data === null) return undefined
    return e
  } catch {
    return undefined
  }
}

/**
 * Applies every event of OB_EVENTS to the MessageStore, at least once. Applying is idempotent by event id,
 * so a redelivery after a crash between apply and ack changes nothing. Each message is acked right after
 * its own apply: `ack()` is a fire-and-forget publish that the client coalesces into one socket write, so
 * a per-message ack costs no round trip, while AckPolicy.All would force applying strictly in order.
 */
export async function startProjector (
  config: Config, shared: { nc: NatsConnection, redis: Redis, log: Logger, metrics: OutboxMetrics },
  reputation?: ReputationGuard, retentionOf?: RetentionOf
): Promise<Projector> {
  const log = shared.log.child({ part: 'projector' })
  const store = new MessageStore(shared.redis, undefined, retentionOf)
  await ensureJetStream(shared.nc, tablePart(jetStreamTable(jetStreamSettings(config)), 'projector'))
  const consumer = await jetstream(shared.nc).consumers.get(STREAM_EVENTS, CONSUMER_PROJECTOR)
  const messages = await consumer.consume({ max_messages: CONCURRENCY })
  let inFlight = 0
  let slotFreed: (() => void) | undefined
  let stopping = false
  const idle = new Set<() => void>()
  const backoff = new ApplyBackoff(PROJECTOR_RETRY_FIRST_MS, PROJECTOR_RETRY_MAX_MS)
  shared.metrics.read('outbox_projector_backoff_seconds', (set) => { set(backoff.delayMs / 1000) })

  async function apply (m: JsMsg, e: EventRecord): Promise<void> {
    const round = backoff.current
    try {
      const first = await store.applyEvent(e)
      // counted once, on the first apply: the reputation window must not count a redelivered event again
      if (first && reputation !== undefined) await reputation.observe(e)
      m.ack()
      if (backoff.backingOff) {
        const failingForMs = Date.now() - backoff.failingSince
        log.info({ failures: backoff.failures, failingForMs }, 'the read model takes events again; projector resumed')
        backoff.succeeded()
      }
    } catch (err) {
      shared.metrics.projectorApplyFailures.inc()
      const before = backoff.delayMs
      if (backoff.failed(round, Date.now())) {
        // One line when the trouble starts and one when the wait reaches its cap, not one per event or per try.
        if (before === 0) log.warn({ err, event: e.id }, 'applying events to the read model fails; the projector backs off and retries')
        else if (backoff.delayMs === PROJECTOR_RETRY_MAX_MS && before < PROJECTOR_RETRY_MAX_MS) {
          log.warn({ err, failures: backoff.failures, retryEveryMs: backoff.delayMs }, 'the read model still refuses events')
        }
      }
      m.nak(backoff.delayMs)
    } finally {
      inFlight--
      const freed = slotFreed
      slotFreed = undefined
      freed?.()
      if (inFlight === 0) for (const done of idle) done()
    }
  }

  /** Resolves once `m` may be applied: a free slot, and while backing off, the wait over and nothing in flight. */
  async function slotFor (m: JsMsg): Promise<void> {
    let progressAt = 0
    while (!stopping) {
      if (!backoff.backingOff) {
        if (inFlight < CONCURRENCY) return
        await new Promise<void>((resolve) => { slotFreed = wake = resolve })
        continue
      }
      const now = Date.now()
      if (inFlight === 0 && now >= backoff.pausedUntil) return
      // Held past its ack wait, the event would be handed out again; say it is still being worked on.
      if (progressAt === 0) progressAt = now + HELD_PROGRESS_MS
      else if (now >= progressAt) { m.working(); progressAt = now + HELD_PROGRESS_MS }
      const waitMs = inFlight === 0 ? Math.min(backoff.pausedUntil - now, HELD_PROGRESS_MS) : HELD_PROGRESS_MS
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.max(1, waitMs))
        function done (): void { clearTimeout(timer); resolve() }
        slotFreed = wake = done
      })
    }
  }
  let wake: (() => void) | undefined

  const loop = (async () => {
    for await (const m of messages) {
      const e = parseEvent(m)
      if (e === undefined) {
        log.error({ seq: m.seq, subject: m.subject }, 'event is not an EventRecord; terminated')
        m.term() // without a reason, which nats-server 2.9 would not recognise
        continue
      }
      // The usual case (a free slot, not backing off) costs no promise.
      if (backoff.backingOff || inFlight >= CONCURRENCY) await slotFor(m)
      if (stopping) { m.nak(); break }
      inFlight++
      void apply(m, e)
    }
  })().catch((err) => log.error({ err }, 'projector stopped'))
  log.info('projector started')

  return {
    async stop () {
      stopping = true
      wake?.()
      await messages.close().catch(() => {})
      await loop
      if (inFlight > 0) await new Promise<void>((resolve) => idle.add(resolve))
    }
  }
}
