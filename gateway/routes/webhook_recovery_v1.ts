import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { idempotent } from '../idempotency/mod.ts'
import { FORBIDDEN_OTHER_ORG, errorResponses } from '../schemas/control.ts'
import { MAX_GRACE_PERIOD_MINUTES, recoverEvents, replayEvent, rotateWebhookSecret } from '../control/webhook_recovery.ts'

const TAG = 'Webhooks'
const NOT_FOUND = 'No webhook with this id'
const IDEMPOTENT = ' With an `Idempotency-Key` header, a retry with the same key and body within 24 h answers the first response ' +
  '(header `Idempotent-Replayed: true`) and changes nothing.'

const RotateBody = Type.Object({
  grace_period_minutes: Type.Integer({
    minimum: 0,
    maximum: MAX_GRACE_PERIOD_MINUTES,
    description: 'How long the previous secret keeps signing requests as well (0 to 10080, 7 days); 0 ends it at once'
  })
}, { additionalProperties: false })
const Rotated = Type.Object({
  secret: Type.String({ description: 'The new signing secret (`whsec_` + base64 text); returned only in this response' }),
  previous_secret_expires_at: Type.String({
    format: 'date-time', description: 'Until then every request also carries a signature made with the previous secret'
  })
})

const ReplayBody = Type.Object({
  event_id: Type.String({ pattern: '^evt_[0-9a-z]{26}$', errorMessage: 'must be an event id (evt_…)' })
}, { additionalProperties: false })
const Replayed = Type.Object({ event_id: Type.String() })

const RecoverBody = Type.Object({
  since: Type.String({ format: 'date-time', errorMessage: 'must be an ISO 8601 date-time such as 2026-01-31T09:00:00Z' })
}, { additionalProperties: false })
const Recovered = Type.Object({ events: Type.Integer({ description: 'How many events were queued' }) })

export const webhookRecoveryRoutes = [
  route<{ grace_period_minutes: number }>({
    method: 'post',
    path: '/v1/webhooks/:id/rotate-secret',
    audit: {
      action: 'webhook.secret_rotated',
      fields: ['grace_period_minutes'],
      detail: ({ reply }) => ({ previous_secret_expires_at: reply.previous_secret_expires_at })
    },
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Replace the signing secret; the previous one keeps signing during a grace period',
    description: 'Answers the new secret. Until `previous_secret_expires_at` every request carries two signatures, one per ' +
      'secret, in `X-Service-Signature` (two `v1=`) and in `webhook-signature` (two `v1,…` separated by a space). A second rotation ' +
      'within the grace period drops the oldest secret. Without an `Idempotency-Key`, every call makes a new secret.' + IDEMPOTENT,
    tag: TAG,
    body: RotateBody,
    responses: {
      200: { description: 'The new secret', schema: Rotated },
      ...errorResponses({
        validation_error: '`grace_period_minutes` missing or not an integer from 0 to 10080',
        forbidden: FORBIDDEN_OTHER_ORG,
        not_found: NOT_FOUND,
        conflict: 'A request with this Idempotency-Key is still being processed',
        idempotency_key_reused: 'The Idempotency-Key was used with a different body'
      })
    },
    handler: async (ctx) => {
      const { deps, params, auth, body } = ctx
      const w = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      return await idempotent(ctx, `/v1/webhooks/${w.id}/rotate-secret`, async () => {
        const { webhook, expiresAt } = await rotateWebhookSecret(deps, w, body.grace_period_minutes)
        return { status: 200, body: { secret: webhook.secret, previous_secret_expires_at: expiresAt } }
      })
    }
  }),
  route<{ event_id: string }>({
    method: 'post',
    path: '/v1/webhooks/:id/replay',
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Send one event to this webhook again',
    description: 'The event of the last 30 days goes again to this webhook, whatever its subscriptions and status: the same ' +
      'envelope and `id` (`webhook-id`), a fresh timestamp and signatures. It is attempted once and appears in the delivery log. ' +
      'Each call without an `Idempotency-Key` sends the event once more.' + IDEMPOTENT,
    tag: TAG,
    body: ReplayBody,
    responses: {
      202: { description: 'The event is queued for this webhook', schema: Replayed },
      ...errorResponses({
        validation_error: '`event_id` missing or not an event id',
        forbidden: 'The webhook or the event belongs to another organisation (nothing is sent)',
        not_found: 'No such webhook, or no event of this id in the last 30 days',
        conflict: 'A request with this Idempotency-Key is still being processed',
        idempotency_key_reused: 'The Idempotency-Key was used with a different body',
        service_unavailable: 'The event could not be queued; retry'
      })
    },
    handler: async (ctx) => {
      const { deps, params, auth, body } = ctx
      const w = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      return await idempotent(ctx, `/v1/webhooks/${w.id}/replay`, async () => {
        await replayEvent(deps, w, body.event_id)
        return { status: 202, body: { event_id: body.event_id } }
      })
    }
  }),
  route<{ since: string }>({
    method: 'post',
    path: '/v1/webhooks/:id/recover',
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Send again every event since a time that this webhook did not receive',
    description: 'Queues every event since `since` (no earlier than 30 days ago, nor than the webhook\'s creation) of a type ' +
      'the webhook subscribes to now, that it never answered with a 2xx: also those that failed every retry or happened while it ' +
      'was paused or failed, and those whose retries are still pending. They keep their ids and follow the retry schedule. An event ' +
      'queued by a recover of this webhook within the last hour is not queued again, so a retried recover never sends an event ' +
      'twice.' + IDEMPOTENT,
    tag: TAG,
    body: RecoverBody,
    responses: {
      202: { description: 'The events are queued', schema: Recovered },
      ...errorResponses({
        validation_error: '`since` missing or not an ISO 8601 date-time',
        forbidden: FORBIDDEN_OTHER_ORG,
        not_found: NOT_FOUND,
        conflict: 'The webhook is paused or failed (make it active first), or a request with this Idempotency-Key is still being processed',
        idempotency_key_reused: 'The Idempotency-Key was used with a different body',
        service_unavailable: 'The events could not be queued; retry (events already queued are not queued twice)'
      })
    },
    handler: async (ctx) => {
      const { deps, params, auth, body } = ctx
      const w = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      const since = Date.parse(body.since)
      if (!Number.isFinite(since)) {
        throw ApiError.validation([{ field: 'since', message: 'must be an ISO 8601 date-time such as 2026-01-31T09:00:00Z' }])
      }
      return await idempotent(ctx, `/v1/webhooks/${w.id}/recover`, async () => {
        const events = await recoverEvents(deps, w, since)
        return { status: 202, body: { events } }
      })
    }
  })
]
