import { jetstream } from '@nats-io/jetstream'
import { eventSubject, newId, randomToken, type EventRecord, type EventType, type WebhookRecord } from '../../protocol/mod.ts'
import type { TestOutbox, TestOrg } from './outbox.ts'

/**
 * Webhook records are written straight to the control plane (`cp.webhooks.put`), as the CRUD API would,
 * and events are published to OB_EVENTS exactly as the delivery engine publishes them.
 */
export async function putWebhook (
  ob: TestOutbox, org: TestOrg, opts: { url: string, events: string[], status?: WebhookRecord['status'] }
): Promise<WebhookRecord> {
  const now = new Date().toISOString()
  const record: WebhookRecord = {
    id: newId('wh'),
    org_id: org.orgId,
    url: opts.url,
    events: opts.events,
    secret: `whsec_${randomToken(32)}`,
    status: opts.status ?? 'active',
    created_at: now,
    updated_at: now
  }
  await ob.proc.cp.webhooks.put(`${org.orgId}.${record.id}`, record)
  return record
}

export async function setWebhookStatus (ob: TestOutbox, w: WebhookRecord, status: WebhookRecord['status']): Promise<void> {
  await ob.proc.cp.webhooks.modify(`${w.org_id}.${w.id}`, (cur) => ({ ...cur, status, updated_at: new Date().toISOString() }))
}

export function webhookNow (ob: TestOutbox, w: WebhookRecord): WebhookRecord | undefined {
  return ob.proc.cp.webhooks.get(`${w.org_id}.${w.id}`)
}

export async function publishEvent (
  ob: TestOutbox, org: TestOrg, type: EventType, data: Record<string, unknown> = {}
): Promise<EventRecord> {
  const record: EventRecord = {
    id: newId('evt'),
    type,
    timestamp: new Date().toISOString(),
    org_id: org.orgId,
    message_id: 'msg_0000000000000000000000000a',
    data: { message_id: 'msg_0000000000000000000000000a', to: 'a@example.net', metadata: { order: '42' }, ...data }
  }
  await jetstream(ob.proc.nc).publish(eventSubject(org.orgId, type), JSON.stringify(record), { msgID: record.id })
  return record
}

export const sleep = async (ms: number): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, ms)) }
