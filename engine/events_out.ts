import {
  addressDomain, eventId, eventRecord, streamField, tagsField, type EventRecord, type QueuedMessage, type RecipientEventFields,
  type RecipientEventType
} from '../protocol/mod.ts'

/**
 * Event records of deliveries. `data` always carries message_id, from, to (the one recipient), subject and
 * the message's metadata, tags and stream (no `tags` field when it has none, so events of untagged messages keep the
 * bytes earlier versions stored, and no `stream` for messages queued without one), plus the fields of the type. Ids
 * are deterministic — `eventId(message_id, recipient, type, attempt)` with attempt 0 for outcomes that happen once
 * per recipient — so an event published again after a crash is dropped by JetStream's duplicate window and
 * recognised by receivers.
 */
export class EventFactory {
  /** The sending domain, which the gateway made the from address's domain; on each record for webhook filters. */
  private readonly domain: string

  constructor (private readonly msg: QueuedMessage, private readonly subject: string) {
    this.domain = addressDomain(msg.from)
  }

  make<T extends RecipientEventType> (type: T, rcpt: string, at: string, fields: RecipientEventFields[T], attempt = 0): EventRecord {
    const m = this.msg
    return eventRecord<RecipientEventType>(
      eventId(m.id, rcpt, type, attempt), type, m.org_id,
      {
        message_id: m.id, from: m.from, to: rcpt, subject: this.subject, ...fields, metadata: m.metadata, ...tagsField(m.tags),
        ...streamField(m.stream)
      },
      m.id, at, m.environment === 'test' ? 'test' : 'live', this.domain
    )
  }
}
