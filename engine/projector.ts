import { jetstream, type JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import { CONSUMER_PROJECTOR, STREAM_EVENTS, EVENT_TYPES, jetStreamSettings, jetStreamTable, tablePart, type EventRecord } from '../protocol/mod.ts'
import { MessageStore } from '../stores/read_model/mod.ts'
import { ensureJetStream } from '../stores/clients/mod.ts'

/** Events applied concurrently; Redis auto-pipelining turns them into few round trips. */
const CONCURRENCY = 256
const RETRY_DELAY_MS = 1000 // 1 s before a failed apply (Redis away) is redelivered
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
export async function startProjector (config: Config, shared: { nc: NatsConnection, redis: Redis, log: Logger }): Promise<Projector> {
  const log = shared.log.child({ part: 'projector' })
  const store = new MessageStore(shared.redis)
  await ensureJetStream(shared.nc, tablePart(jetStreamTable(jetStreamSettings(config)), 'projector'))
  const consumer = await jetstream(shared.nc).consumers.get(STREAM_EVENTS, CONSUMER_PROJECTOR)
  const messages = await consumer.consume({ max_messages: CONCURRENCY })
  let inFlight = 0
  let slotFreed: (() => void) | undefined
  const idle = new Set<() => void>()

  async function apply (m: JsMsg, e: EventRecord): Promise<void> {
    try {
      await store.applyEvent(e)
      m.ack()
    } catch (err) {
      log.warn({ err, event: e.id }, 'applying an event failed; it will be redelivered')
      m.nak(RETRY_DELAY_MS)
    } finally {
      inFlight--
      slotFreed?.()
      if (inFlight === 0) for (const done of idle) done()
    }
  }

  const loop = (async () => {
    for await (const m of messages) {
      const e = parseEvent(m)
      if (e === undefined) {
        log.error({ seq: m.seq, subject: m.subject }, 'event is not an EventRecord; terminated')
        m.term() // without a reason, which nats-server 2.9 would not recognise
        continue
      }
      while (inFlight >= CONCURRENCY) await new Promise<void>((resolve) => { slotFreed = resolve })
      slotFreed = undefined
      inFlight++
      void apply(m, e)
    }
  })().catch((err) => log.error({ err }, 'projector stopped'))
  log.info('projector started')

  return {
    async stop () {
      await messages.close().catch(() => {})
      await loop
      if (inFlight > 0) await new Promise<void>((resolve) => idle.add(resolve))
    }
  }
}
