import { eventId, type EventRecord, type EventType } from './protocol/events.ts'
import { eventSubject } from './protocol/subjects.ts'
import type { QueuedMessage } from './protocol/send.ts'
import type { JsPublish } from './protocol/js_publisher.ts'

/**
 * Event records of deliveries. `data` always carries message_id, from, to (the one recipient), subject and
 * the message's metadata, plus the fields of the type. Ids are deterministic — `eventId(message_id,
 * recipient, type, attempt)` with attempt 0 for outcomes that happen once per recipient — so an event
 * published again after a crash is dropped by JetStream's duplicate window and recognised by receivers.
 */
export class EventFactory {
  constructor (private readonly msg: QueuedMessage, private readonly subject: string) {}

  make (type: EventType, rcpt: string, at: string, fields: Record<string, unknown>, attempt = 0): EventRecord {
    return {
      id: eventId(this.msg.id, rcpt, type, attempt),
      type,
      timestamp: at,
      org_id: this.msg.org_id,
      message_id: this.msg.id,
      data: { message_id: this.msg.id, from: this.msg.from, to: rcpt, subject: this.subject, ...fields, metadata: this.msg.metadata }
    }
  }
}

const enc = new TextEncoder()

/** Publishes each event to `ob.evt.<org>.<type>` with its id as Nats-Msg-Id and waits for every PubAck. */
export async function publishEvents (js: JsPublish, events: readonly EventRecord[]): Promise<void> {
  await Promise.all(events.map(async (e) => await js.publish(eventSubject(e.org_id, e.type), enc.encode(JSON.stringify(e)), { msgID: e.id })))
}
