import { Type } from 'typebox'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { PageQuery, pageParams, pageSchema, withinBytes } from '../http/pagination.ts'
import { ApiError, WEBHOOK_EVENT_TYPES } from '../../protocol/mod.ts'
import { DeliveryLog } from '../../stores/webhooks/mod.ts'

const TestBody = Type.Object({
  type: Type.Union(WEBHOOK_EVENT_TYPES.map((t) => Type.Literal(t)), { description: '`inbound` sends an `inbound.received` event' })
}, { additionalProperties: false })

const TestAccepted = Type.Object({ event_id: Type.String() })

const Attempt = Type.Object({
  id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  attempt: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  duration_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  at: Type.String(),
  test: Type.Boolean({ description: 'A test event (`POST /v1/webhooks/{id}/test`): not stored as an event, so it cannot be replayed' }),
  request_body: Type.Union([Type.String(), Type.Null()], {
    description: 'The first 2,048 characters of the body sent, for an attempt that did not succeed and for a test event; ' +
      'null for a successful attempt (its body is the event, `GET /v1/events/{id}`)'
  }),
  response_body: Type.Union([Type.String(), Type.Null()], {
    description: 'The first 1,024 bytes of the response body (as UTF-8); null when no response came'
  })
})

const ErrorDoc = (description: string): { description: string } => ({ description })
const DELIVERY_ID = /^whd_[0-9a-z]{26}$/

export const webhookDeliveryRoutes = [
  route<{ type: (typeof WEBHOOK_EVENT_TYPES)[number] }>({
    method: 'post',
    path: '/v1/webhooks/:id/test',
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Send a signed test event to this webhook',
    description: 'The event goes to this webhook only, whatever its subscriptions and status (also paused or failed), ' +
      'through the normal signed delivery path; it is attempted once, its `data.test` is true, and it appears in the delivery log.',
    tag: 'Webhooks',
    body: TestBody,
    responses: {
      202: { description: 'Test event queued', schema: TestAccepted },
      400: ErrorDoc('Unknown event type'),
      403: ErrorDoc('Webhook of another organisation'),
      404: ErrorDoc('No such webhook')
    },
    handler: async ({ deps, auth, params, body }) => {
      const webhook = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      const type = body.type === 'inbound' ? 'inbound.received' : body.type
      try {
        const eventId = await deps.webhookJobs.enqueueTest(webhook, type, Date.now(), auth.key.environment)
        return { status: 202, body: { event_id: eventId } }
      } catch (err) {
        throw new ApiError('service_unavailable', 'The test event could not be queued; try again.', { cause: err })
      }
    }
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/:id/deliveries',
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Delivery attempts of this webhook, newest first',
    description: 'The last 1000 attempts, kept 30 days after the most recent one. Each keeps the start of what the receiver ' +
      'answered and, when it did not succeed (or was a test event), the start of what was sent.',
    tag: 'Webhooks',
    query: PageQuery,
    responses: {
      200: { description: 'A page of attempts', schema: pageSchema(Attempt) },
      403: ErrorDoc('Webhook of another organisation'),
      404: ErrorDoc('No such webhook')
    },
    handler: async ({ deps, auth, params, query }) => {
      const webhook = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      const { limit, cursor, maxBytes } = pageParams(query, deps.config.api.listMaxBytes)
      let before: string | undefined
      if (cursor !== undefined) {
        before = Buffer.from(cursor, 'base64url').toString('utf8')
        if (!DELIVERY_ID.test(before)) throw ApiError.validation([{ field: 'cursor', message: 'is not a cursor this API returned' }])
      }
      const page = await new DeliveryLog(deps.redis).list(webhook.id, limit, before)
      const last = page.data[page.data.length - 1]
      const body = {
        data: page.data,
        has_more: page.hasMore,
        next_cursor: page.hasMore && last !== undefined ? Buffer.from(last.id).toString('base64url') : null
      }
      return { status: 200, body: withinBytes(body, maxBytes, (a) => Buffer.from(a.id).toString('base64url')) }
    }
  })
]
