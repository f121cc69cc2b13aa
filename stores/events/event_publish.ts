import type { JsPublish } from '../clients/mod.ts'
import { type ControlPlane, KvConflictError } from '../control_plane/mod.ts'
import { eventSubject, type EventRecord, type SuppressionRecord } from '../../protocol/mod.ts'

const enc = new TextEncoder()

/**
 * The one publisher of events: publishes an event (made by `eventRecord`) to `ob.evt.<org>.<type>` on OB_EVENTS
 * and waits for the PubAck. The event id is the JetStream message id (Nats-Msg-Id), so a re-publish of the same
 * outcome (a redelivered message or job, a repeated request) is dropped by the stream.
 */
export async function publishEvent (js: JsPublish, e: EventRecord): Promise<void> {
  await js.publish(eventSubject(e.org_id, e.type), enc.encode(JSON.stringify(e)), { msgID: e.id })
}

/**
 * Adds an address to the organisation's suppression list. An active entry is kept as it is (its first reason
 * and date are what users want to see), so repeated bounces or clicks cost one look-up; an expired one is replaced.
 * Of two writers at once the first one's entry stays. Resolves true when this call added the entry (the caller
 * counts it in `outbox_suppressions_added_total`).
 */
export async function suppressAddress (
  cp: ControlPlane, orgId: string, email: string, reason: SuppressionRecord['reason'], messageId?: string, stream?: string
): Promise<boolean> {
  // `stream` (a broadcast stream, for unsubscribes and complaints of its mail) limits the entry to that stream
  if (cp.isSuppressed(orgId, email, stream)) return false
  const details = { ...(messageId !== undefined ? { messageId } : {}), ...(stream !== undefined ? { stream } : {}) }
  return await cp.suppressionLists.add(orgId, email, reason, details).then((r) => r.created, (err: unknown) => {
    if (err instanceof KvConflictError) return false
    throw err
  })
}
