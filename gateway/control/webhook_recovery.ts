import {
  ApiError, eventAttributes, matchesFilters, randomToken, withEnvironment, type EventAttributes, type WebhookRecord
} from '../../protocol/mod.ts'
import { DeliveryLog, RecoveryClaims, type WebhookEnvelope, type WebhookJob } from '../../stores/webhooks/mod.ts'
import type { GatewayDeps } from '../deps.ts'
import { newWebhookSecret } from './webhooks.ts'

/** Events are kept this long (OB_EVENTS and the read model); a recover reaches no further back. */
export const RECOVER_WINDOW_MS = 30 * 24 * 3600_000
/** Events listed, checked, read and queued per round of a recover, so its memory stays bounded whatever its size. */
const RECOVER_CHUNK = 500
export const MAX_GRACE_PERIOD_MINUTES = 10_080 // 7 days

/**
 * A new signing secret. During the grace period (0 ends the old secret at once) every request is signed with
 * both, so receivers can switch at their own pace; a second rotation within it drops the oldest secret.
 */
export async function rotateWebhookSecret (
  deps: GatewayDeps, w: WebhookRecord, graceMinutes: number, now = Date.now()
): Promise<{ webhook: WebhookRecord, expiresAt: string }> {
  const expiresAt = new Date(now + graceMinutes * 60_000).toISOString()
  const secret = newWebhookSecret()
  const updated = await deps.cp.webhooks.modify(`${w.org_id}.${w.id}`, (cur): WebhookRecord => {
    const { previous_secret: _s, previous_secret_expires_at: _e, ...rest } = cur
    const at = new Date(now).toISOString()
    return graceMinutes > 0
      ? { ...rest, secret, previous_secret: cur.secret, previous_secret_expires_at: expiresAt, updated_at: at }
      : { ...rest, secret, updated_at: at }
  })
  if (updated === undefined) throw new ApiError('not_found', `No webhook with id ${w.id}.`)
  return { webhook: updated, expiresAt }
}

function unavailable (err: unknown): ApiError {
  if (err instanceof ApiError) return err
  return new ApiError('service_unavailable', 'The events could not be queued; retry shortly.', { cause: err, retryAfter: 1 })
}

/**
 * The event as stored, of the caller's organisation. When that organisation has none of that id, the event's owner
 * key (written with the event, expiring with it) tells another organisation's event (403, nothing sent) from an
 * unknown id or one older than 30 days (404). Either way it costs at most two reads whatever the number of
 * organisations and the size of their history: no organisation but the caller's is ever looked in.
 */
async function ownedEventJson (deps: GatewayDeps, orgId: string, eventId: string): Promise<string> {
  const [json] = await deps.messages.eventJson(orgId, [eventId])
  if (json !== undefined) return json
  const owner = await deps.messages.eventOwner(eventId)
  if (owner !== undefined && owner !== orgId) throw new ApiError('forbidden', `The event ${eventId} belongs to another organisation.`)
  throw new ApiError('not_found', `No event with id ${eventId} in the last 30 days.`)
}

/** A stored event as a webhook receives it, with what its filters read. */
interface StoredForWebhook { event: WebhookEnvelope, json: string, attrs: EventAttributes }

/**
 * Stored envelopes (the read model keeps them without `environment`) as webhook envelopes: the environment and the
 * sending domain are those of the event's message, read for all of them in one round trip; an event of no message
 * kept in the read model is live (see eventAttributes for the domain of the others).
 */
async function forWebhook (deps: GatewayDeps, orgId: string, jsons: readonly string[]): Promise<StoredForWebhook[]> {
  const stored = jsons.map((json) => JSON.parse(json) as WebhookEnvelope)
  const messageIds = stored.map((e) => e.type !== 'inbound.received' && typeof e.data.message_id === 'string' ? e.data.message_id : '')
  const routing = await deps.messages.messageRouting(orgId, messageIds)
  return stored.map((e, i) => {
    const environment = routing[i]?.environment ?? 'live'
    const event = withEnvironment(e, environment)
    return { event, json: JSON.stringify(event), attrs: eventAttributes(e.type, e.data, environment, routing[i]?.domain) }
  })
}

/**
 * Sends one event to the webhook again: same envelope and id, a fresh signature, one attempt (whatever the
 * webhook's status), recorded in its delivery log like any attempt.
 */
export async function replayEvent (deps: GatewayDeps, w: WebhookRecord, eventId: string, now = Date.now()): Promise<void> {
  let json: string
  try {
    json = await ownedEventJson(deps, w.org_id, eventId)
  } catch (err) {
    throw unavailable(err)
  }
  let event: StoredForWebhook
  try {
    [event] = await forWebhook(deps, w.org_id, [json]) as [StoredForWebhook]
  } catch (err) {
    throw unavailable(err)
  }
  const job: WebhookJob = {
    event: event.event, org_id: w.org_id, webhook_id: w.id, attempt: 1, due_at: now, created_at: now, replay: true,
    run: `rp${randomToken(10)}`
  }
  try {
    await deps.webhookJobs.enqueueJobs([job], [event.json])
  } catch (err) {
    throw unavailable(err)
  }
}

/** The event types a webhook's subscriptions stand for (`inbound` is an alias of `inbound.received`). */
export function subscribedTypes (events: readonly string[]): string[] {
  return [...new Set(events.map((e) => (e === 'inbound' ? 'inbound.received' : e)))]
}

/**
 * Queues again every event of the webhook's organisation, of a type it subscribes to and passing its filters, from
 * `sinceMs` (no earlier than 30 days ago nor than the webhook's creation), that the webhook never answered with a 2xx.
 * Each is a normal delivery with the retry schedule. Events queued by a recover within the last hour are
 * skipped, so a retried recover never sends one twice. Returns how many were queued.
 */
export async function recoverEvents (deps: GatewayDeps, w: WebhookRecord, sinceMs: number, now = Date.now()): Promise<number> {
  if (w.status !== 'active') {
    throw new ApiError('conflict', `The webhook ${w.id} is ${w.status}; make it active (PATCH status active) before recovering events.`)
  }
  const from = Math.max(sinceMs, now - RECOVER_WINDOW_MS, Date.parse(w.created_at) || 0)
  const store = deps.messages
  const claims = new RecoveryClaims(deps.redis)
  const log = new DeliveryLog(deps.redis)
  let queued = 0
  const run = `rc${randomToken(10)}`
  const batches = store.eventIdsSince(w.org_id, subscribedTypes(w.events), from, RECOVER_CHUNK)
  // One batch at a time, oldest first: listed, checked against the delivery log, claimed, read and queued.
  for (;;) {
    let claimed: string[]
    try {
      const next = await batches.next()
      if (next.done === true) break
      claimed = await claims.claim(w.id, await log.notReceived(w.id, next.value), now)
    } catch (err) {
      throw unavailable(err)
    }
    if (claimed.length === 0) continue
    try {
      // An event that expired between the listing and now is no longer kept: nothing to send.
      const stored = (await store.eventJson(w.org_id, claimed)).filter((json): json is string => json !== undefined)
      const jobs: WebhookJob[] = []
      const bodies: string[] = []
      const filteredOut: string[] = []
      for (const s of await forWebhook(deps, w.org_id, stored)) {
        // The webhook's filters as they are now, like its event types.
        if (!matchesFilters(w.filters, s.attrs)) { filteredOut.push(s.event.id); continue }
        jobs.push({ event: s.event, org_id: w.org_id, webhook_id: w.id, attempt: 1, due_at: now, created_at: now, run })
        bodies.push(s.json)
      }
      if (filteredOut.length > 0) await claims.release(w.id, filteredOut)
      await deps.webhookJobs.enqueueJobs(jobs, bodies)
      queued += jobs.length
    } catch (err) {
      // What this batch did not queue is given back, so a retry of this recover queues it; earlier batches are queued.
      await claims.release(w.id, claimed).catch(() => {})
      throw unavailable(err)
    }
  }
  return queued
}
