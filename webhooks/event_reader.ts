import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM_EVENTS, webhookEnvelopeOf, type EventRecord } from '../protocol/mod.ts'
import { type WebhookJob, type WebhookJobRef } from '../stores/webhooks/mod.ts'

/**
 * Reads back the event a parked job names (WebhookJobRef) from OB_EVENTS, once the job is about to be
 * attempted: work that goes back to the stream unread never costs a read.
 */
export class EventReader {
  private jsm?: Promise<JetStreamManager>

  constructor (private readonly nc: NatsConnection) {}

  /**
   * The job with its event, or undefined when OB_EVENTS no longer holds that event: the sequence is not stored, or
   * what is stored there is not that event (another id, or not an event at all, which no reading later would change).
   * Rejects when NATS fails.
   */
  async job (ref: WebhookJobRef): Promise<WebhookJob | undefined> {
    this.jsm ??= jetstreamManager(this.nc)
    let jsm: JetStreamManager
    try {
      jsm = await this.jsm
    } catch (err) {
      this.jsm = undefined
      throw err
    }
    const stored = await jsm.streams.getMessage(STREAM_EVENTS, { seq: ref.event_seq })
    if (stored === null) return undefined
    let record: EventRecord | null
    try {
      record = stored.json<EventRecord>()
    } catch {
      return undefined
    }
    if (record?.id !== ref.event_id) return undefined
    const { event_id: _eventId, ...job } = ref
    return { ...job, event: webhookEnvelopeOf(record) }
  }
}
