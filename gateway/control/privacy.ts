import { Type, type Static } from 'typebox'
import { jetstreamManager } from '@nats-io/jetstream'
import { ApiError, bareAddress, deliveryStateKey, newId } from '../../protocol/mod.ts'
import { eraseFromReadModel, messagesInDelivery, messagesToAddress } from '../../stores/read_model/mod.ts'
import { eraseStoredEvents, type ErasedEvent } from '../../stores/events/mod.ts'
import { DeliveryLog, eraseWebhookJobs } from '../../stores/webhooks/mod.ts'
import { dropReader, waitingInbound, type WaitingInbound } from '../../stores/inbound_raw/mod.ts'
import type { GatewayDeps } from '../deps.ts'
import { isEmail } from './suppressions.ts'

const Count = (description: string): ReturnType<typeof Type.Integer> => Type.Integer({ minimum: 0, description })
/** What an erase removed, per store, and whether a keyed hash of the address stays on the suppression list. */
export const EraseReceipt = Type.Object({
  id: Type.String({ description: 'The erase\'s id (`era_…`)' }),
  erased_at: Type.String({ description: 'ISO 8601' }),
  address_hash: Type.String({ description: 'The address\'s keyed hash (`erased:<hex>`), as the audit log and a kept suppression name it' }),
  removed: Type.Object({
    messages: Count('Message records (a message to several recipients is erased whole)'),
    recipient_entries: Count('Entries of the recipient index (`?to=`)'),
    events: Count('Events in the read model (GET /v1/events, a message\'s events)'),
    stored_events: Count('Events deleted from the event stream OB_EVENTS (delivery, tracking, inbound)'),
    message_content: Count('Messages whose recorded content was deleted'),
    delivery_log_entries: Count('Webhook delivery log entries of the erased events'),
    webhook_jobs: Count('Webhook attempts still waiting (OB_WEBHOOK_JOBS) for the erased events or for events naming the address'),
    delivery_states: Count('The engine\'s per-message delivery state of the erased messages (which recipient got which reply)'),
    suppressions: Count('Suppression entries holding the address'),
    suppression_markers: Count('Delete markers removed from the suppression bucket under the address\'s keys (a SHA-256 ' +
      'of the address): those of the erased entries, or of a suppression lifted before'),
    audit_entries: Count('Audit log entries naming the address (e.g. suppression.added, suppression.removed), ' +
      'rewritten to name its keyed hash instead'),
    inbound_raw: Count('Received messages kept whole (the `raw.url` of an erased inbound.received event) that the organisation ' +
      'can no longer read: it was taken off their readers'),
    inbound_raw_deleted: Count('Of those, the messages deleted from the store, no other organisation reading them')
  }),
  kept_suppressed: Type.Boolean({ description: 'A keyed hash of the address stays on the suppression list' })
})

export type EraseReceipt = Static<typeof EraseReceipt>

type EraseDeps = Pick<GatewayDeps, 'redis' | 'nc' | 'cp' | 'messageContent' | 'config' | 'audit'>

/**
 * Erases an address from every store Outbox keeps for the organisation (docs/privacy.md), each store through its own
 * module: the messages to it (found by the read model's recipient index) and their events first from the event stream
 * (one pass over the organisation's events, which also finds events naming the address outside those messages; a
 * received message kept whole for one of those events loses the organisation as its reader before), then
 * the read model, the recorded content of those messages, the webhook attempts still waiting for those events (or
 * for other events naming the address) and the delivery log entries of the erased events, the suppression entry with
 * the delete marker its key leaves, and last the audit entries naming the address, which keep the address's keyed hash
 * instead. Only the organisation's own data is read or touched. Running it again finds nothing more. Mail still in
 * use is waited for (409, nothing erased): messages to the address still to be sent, and received messages naming it
 * still waiting to be processed.
 */
export async function eraseAddress (d: EraseDeps, orgId: string, email: string, keepSuppressed: boolean): Promise<EraseReceipt> {
  const address = bareAddress(email)
  if (!isEmail(address)) throw ApiError.validation([{ field: 'email', message: 'is not an address' }])
  const erasedAt = new Date()
  const fromIndex = await messagesToAddress(d.redis, orgId, address)
  // Their delivery state keeps a redelivered message from sending twice: it can go only once delivery has ended.
  const inDelivery = await messagesInDelivery(d.redis, orgId, fromIndex)
  if (inDelivery.length > 0) {
    throw new ApiError('conflict', `${inDelivery.length} message(s) to this address are still queued, scheduled or being ` +
      'delivered; nothing was erased. Cancel the scheduled ones (POST /v1/messages/{id}/cancel) or erase once their ' +
      'delivery has ended.', { details: { message_ids: inDelivery.slice(0, 100) } })
  }
  // A received message not processed yet would become events naming the address after the erase: it waits for it.
  const waiting = await waitingInbound(d.nc, orgId, address, (name) => d.cp.domainOwner(name))
  if (waiting.kind !== 'none') throw inboundWaiting(waiting)
  const inboundRaw = { dropped: 0, deleted: 0 }
  const storedEvents = await eraseStoredEvents(d.nc, orgId, address, fromIndex, async (found) => {
    for (const name of keptRawOf(found)) {
      const r = await dropReader(d.nc, name, orgId)
      if (r !== 'not_reader') inboundRaw.dropped++
      if (r === 'deleted') inboundRaw.deleted++
    }
  })
  const messageIds = [...new Set([...fromIndex, ...storedEvents.map((e) => e.message_id).filter((m): m is string => m !== undefined)])]
  const readModel = await eraseFromReadModel(d.redis, orgId, messageIds, storedEvents.filter((e) => e.id !== ''))
  const content = await d.messageContent.erase(messageIds)
  const deliveryStates = messageIds.length === 0 ? 0 : await d.redis.del(...messageIds.map(deliveryStateKey))
  const webhookIds = d.cp.webhooks.list(`${orgId}.`).map((w) => w.id)
  const erasedEvents = storedEvents.filter((e) => e.id !== '')
  const erasedIds = new Set(erasedEvents.map((e) => e.id))
  const webhookJobs = await eraseWebhookJobs(d.nc, d.config.engine.shards, orgId, webhookIds, address, erasedIds)
  const deliveryLog = await new DeliveryLog(d.redis).eraseEvents(webhookIds, erasedEvents.map((e) => ({
    id: e.id, ms: Date.parse(e.timestamp ?? '')
  })))
  const suppression = await d.cp.suppressionLists.erase(await jetstreamManager(d.nc), orgId, address, keepSuppressed)
  const addressHash = d.cp.suppressionLists.erasedForm(address)
  const auditEntries = await d.audit.eraseAddress(orgId, address, addressHash, erasedAt)
  return {
    id: newId('era', erasedAt.getTime()),
    erased_at: erasedAt.toISOString(),
    address_hash: addressHash,
    removed: {
      messages: readModel.messages,
      recipient_entries: readModel.recipient_entries,
      events: readModel.events,
      stored_events: storedEvents.length,
      message_content: content,
      delivery_log_entries: deliveryLog,
      webhook_jobs: webhookJobs,
      delivery_states: deliveryStates,
      suppressions: suppression.removed,
      suppression_markers: suppression.markersRemoved,
      audit_entries: auditEntries,
      inbound_raw: inboundRaw.dropped,
      inbound_raw_deleted: inboundRaw.deleted
    },
    kept_suppressed: suppression.hashed
  }
}

/** Seconds after which an erase refused for received mail still waiting may be tried again: such mail normally waits under a second. */
export const INBOUND_WAITING_RETRY_AFTER_S = 5

function inboundWaiting (w: Exclude<WaitingInbound, { kind: 'none' }>): ApiError {
  if (w.kind === 'backlog') {
    return new ApiError('conflict', `${w.waiting} received messages are waiting to be processed, too many to search for this ` +
      'address; nothing was erased. Erase once they are processed.',
    { details: { inbound_waiting: w.waiting }, retryAfter: INBOUND_WAITING_RETRY_AFTER_S })
  }
  return new ApiError('conflict', `${w.messageIds.length} received message(s) naming this address are still waiting to be ` +
    'processed; nothing was erased. Erase again once they are processed.',
  { details: { inbound_message_ids: w.messageIds }, retryAfter: INBOUND_WAITING_RETRY_AFTER_S })
}

/**
 * The received messages kept whole for erased `inbound.received` events: an event that left part of the message out
 * carries `raw: {url, size}`, and the kept message is named by the event's message id (the `{id}` of that url).
 */
function keptRawOf (events: readonly ErasedEvent[]): string[] {
  const names = new Set<string>()
  for (const e of events) {
    const raw = e.data.raw
    if (e.type === 'inbound.received' && typeof raw === 'object' && raw !== null && e.message_id !== undefined) names.add(e.message_id)
  }
  return [...names]
}
