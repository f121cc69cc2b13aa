import { jetstream, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import type { WebhookDispatcher } from './dispatcher.ts'
import type { AckBatch } from './ack_batch.ts'
import {
  CONSUMER_WEBHOOK_FANOUT, STREAM_EVENTS, eventAttributes, matchesFilters, webhookEnvelopeOf, type EventAttributes, type EventRecord,
  type WebhookRecord
} from '../protocol/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'

/** Events being fanned out at once; past this the loop waits, so the consumer's pull stays bounded. */
const MAX_IN_FLIGHT = 2048
/** How long an event waits for the webhook view to catch up before it is handed back and tried again. */
const VIEW_SYNC_TIMEOUT_MS = 5000
const VIEW_STALE_RETRY_MS = 1000
const VIEW_WARN_EVERY_MS = 10_000
const PAUSE_MS = 5

/** Whether a webhook with these subscriptions receives an event of `type` (`inbound` is an alias). */
export function subscribes (events: readonly string[], type: string): boolean {
  return events.includes(type) || (type === 'inbound.received' && events.includes('inbound'))
}

/**
 * Turns every event on OB_EVENTS into one delivery job per active, subscribed webhook of the event's org whose
 * filters it passes (webhook_filters.ts: matched from the record alone, no read per event).
 * The status is read when the event is fanned out: an event that happens while a webhook is paused or failed
 * gets no job, so it is never delivered to that webhook later.
 *
 * Invariant: an event is fanned out with a view of the webhooks at least as new as the webhook bucket was when
 * the event was published. Before fanning out, the event waits until the control plane's watch has applied
 * every revision the bucket held at that moment (`sync`, read after the event arrived, hence after it was
 * published), so a webhook created or made active before the event always receives it, however fast a
 * delete and a create follow each other. There is no other cache: targets are read from the mirror's org
 * group, which the watch keeps.
 */
export class WebhookFanout {
  private messages?: ConsumerMessages
  private inFlight = 0
  private wake?: () => void
  private loop?: Promise<void>
  private viewWarnedAt = 0

  constructor (
    private readonly nc: NatsConnection,
    private readonly cp: ControlPlane,
    private readonly dispatcher: WebhookDispatcher,
    private readonly acks: AckBatch,
    private readonly log: Logger,
    private readonly metrics: OutboxMetrics
  ) {}

  /** Starts pulling from the fan-out consumer, which the caller has ensured (jetstream_table.ts). */
  async start (): Promise<void> {
    const consumer = await jetstream(this.nc).consumers.get(STREAM_EVENTS, CONSUMER_WEBHOOK_FANOUT)
    this.messages = await consumer.consume({ max_messages: 512 })
    this.loop = this.run(this.messages)
  }

  private async run (messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      if (this.inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => { this.wake = resolve })
      // Pace the fan-out by delivery: while endpoints that make progress hold enough work, take no more events.
      while (this.dispatcher.saturated()) await new Promise((resolve) => setTimeout(resolve, PAUSE_MS))
      this.inFlight++
      this.fanOut(m).finally(() => {
        this.inFlight--
        const w = this.wake
        this.wake = undefined
        w?.()
      })
    }
  }

  private targets (record: EventRecord): WebhookRecord[] {
    let attrs: EventAttributes | undefined
    return this.cp.webhooks.allBy('org', record.org_id).filter((w) => {
      if (w.status !== 'active' || !subscribes(w.events, record.type)) return false
      if (w.filters === undefined) return true
      attrs ??= eventAttributes(record.type, record.data ?? {}, record.environment === 'test' ? 'test' : 'live', record.domain)
      return matchesFilters(w.filters, attrs)
    })
  }

  /** Whether the webhook view now holds every change stored before this event was published (see above). */
  private async viewCaughtUp (eventId: string): Promise<boolean> {
    let err: unknown
    try {
      if (await this.cp.webhooks.sync(VIEW_SYNC_TIMEOUT_MS)) return true
    } catch (e) {
      err = e
    }
    // Every event in hand waits on the same view: one line per outage is enough.
    const now = Date.now()
    if (now - this.viewWarnedAt >= VIEW_WARN_EVERY_MS) {
      this.viewWarnedAt = now
      this.log.warn({ err, event_id: eventId }, 'webhook list not caught up with its bucket; events are fanned out once it is')
    }
    return false
  }

  /**
   * Something in the event stream that no engine wrote: no organisation can be told, so it is logged and ended.
   * A plain `term()`: nats-server 2.9 ignores a termination that carries a reason and hands the message out again.
   */
  private notAnEvent (m: JsMsg): void {
    this.log.error({ seq: m.seq, subject: m.subject }, 'not an event record; not fanned out')
    m.term()
  }

  private async fanOut (m: JsMsg): Promise<void> {
    let record: EventRecord
    try {
      record = m.json<EventRecord>()
    } catch {
      this.notAnEvent(m)
      return
    }
    if (typeof record?.org_id !== 'string' || typeof record.type !== 'string') { this.notAnEvent(m); return }
    // from the event's storage in OB_EVENTS to now (a redelivered event counts its whole wait)
    this.metrics.fanoutLag.observe(Math.max(0, Date.now() - m.info.timestampNanos / 1e6) / 1000)
    if (!(await this.viewCaughtUp(record.id))) { m.nak(VIEW_STALE_RETRY_MS); return }
    const targets = this.targets(record)
    if (targets.length === 0) { this.acks.add(m); return }
    const event = webhookEnvelopeOf(record)
    // Serialised once for every webhook of the event: the exact bytes each of them is sent.
    const json = JSON.stringify(event)
    const body = Buffer.from(json)
    const now = Date.now()
    const send = (w: WebhookRecord): Promise<void> => {
      const job = { event, event_seq: m.seq, org_id: w.org_id, webhook_id: w.id, attempt: 1, due_at: now, created_at: now }
      return this.dispatcher.offerDirect(job, w, m, body) ?? this.dispatcher.park(job, json)
    }
    // An event handed out again (its engine stopped, or it waited past the ack wait) goes only to the webhooks that
    // have not answered it yet.
    const deliver = m.redelivered
      ? async (w: WebhookRecord): Promise<void> => { if (!(await this.dispatcher.alreadyAnswered(w.id, { event }))) await send(w) }
      : send
    try {
      await (targets.length === 1 ? deliver(targets[0]!) : Promise.all(targets.map(deliver)))
      this.acks.add(m)
    } catch (err) {
      // Jobs already published are deduplicated (msgID) when the event comes back.
      this.log.warn({ err, event_id: record.id }, 'webhook fan-out failed; the event will be retried')
      m.nak(1000)
    }
  }

  /** Stops pulling events and waits (until `deadline`) for those in hand to be fanned out and acknowledged. */
  async stop (deadline: number): Promise<void> {
    await this.messages?.close().catch(() => {})
    await this.loop?.catch(() => {})
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10))
  }
}
