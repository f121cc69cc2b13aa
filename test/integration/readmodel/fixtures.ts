import { jetstream } from '@nats-io/jetstream'
import { MessageStore } from '../../../stores/read_model/mod.ts'
import { newId, eventId, eventSubject, type EventRecord, type EventType, type QueuedMessage } from '../../../protocol/mod.ts'
import type { TestOutbox, TestOrg } from '../../helpers/outbox.ts'

/** A message as the send path records it, after JetStream accepted it. */
export async function queue (
  ob: TestOutbox, org: TestOrg, over: Partial<QueuedMessage> = {}, status: 'queued' | 'scheduled' = 'queued'
): Promise<QueuedMessage> {
  const createdAt = over.created_at ?? new Date().toISOString()
  const msg: QueuedMessage = {
    v: 1,
    id: newId('msg', Date.parse(createdAt)),
    org_id: org.orgId,
    domain_id: org.domainId,
    key_id: 'key_test',
    environment: 'live',
    from: `sender@${org.domain}`,
    to: ['rcpt@example.net'],
    cc: [],
    bcc: [],
    subject: 'Hello',
    html: '<p>hi</p>',
    headers: {},
    metadata: { order: '42' },
    attachments: [],
    track_opens: true,
    track_clicks: true,
    suppressed: [],
    created_at: createdAt,
    ...over
  }
  await new MessageStore(ob.proc.redis).recordQueued(msg, status)
  return msg
}

export function event (
  org: TestOrg, messageId: string, type: EventType, at = new Date(), extra: Record<string, unknown> = {}
): EventRecord {
  return {
    id: eventId(messageId, type, at.toISOString(), JSON.stringify(extra)),
    type,
    timestamp: at.toISOString(),
    org_id: org.orgId,
    message_id: messageId,
    data: { message_id: messageId, to: 'rcpt@example.net', ...extra }
  }
}

/** Publishes to OB_EVENTS exactly as the delivery engine does; `msgId` overrides the dedupe id. */
export async function publish (ob: TestOutbox, e: EventRecord, msgId = e.id): Promise<void> {
  await jetstream(ob.proc.nc).publish(eventSubject(e.org_id, e.type), JSON.stringify(e), { msgID: msgId })
}
