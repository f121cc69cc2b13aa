import { Type } from 'typebox'
import { ApiError, SUBSCRIBABLE_EVENT_TYPES, type WebhookRecord } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { PageQuery, pageById, pageSchema } from '../http/pagination.ts'
import { MAX_WEBHOOK_URL_LENGTH } from '../control/webhook_url.ts'
import { assertWebhookUrl, buildWebhook, webhookView } from '../control/webhooks.ts'
import { CreatedWebhook, FORBIDDEN_OTHER_ORG, WebhookView, errorResponses } from '../schemas/control.ts'
import { actorOf } from '../security_log.ts'

const EventTypes = Type.Array(Type.Enum([...SUBSCRIBABLE_EVENT_TYPES]), {
  minItems: 1,
  maxItems: SUBSCRIBABLE_EVENT_TYPES.length * 2,
  description: '`inbound` and `inbound.received` both subscribe to inbound.received events'
})
const Url = Type.Refine(
  Type.String({ minLength: 1, maxLength: MAX_WEBHOOK_URL_LENGTH, description: 'An https:// URL without credentials' }),
  (v: string) => /^https:\/\//i.test(v),
  () => 'must be an https:// URL'
)

const CreateWebhookBody = Type.Object({ url: Url, events: EventTypes }, { additionalProperties: false })
const PatchWebhookBody = Type.Object({
  events: Type.Optional(EventTypes),
  status: Type.Optional(Type.Enum(['active', 'paused'], { description: '`active` also revives a failed webhook' }))
}, { additionalProperties: false, minProperties: 1 })

interface PatchWebhook { events?: string[], status?: 'active' | 'paused' }

const TAG = 'Webhooks'
const NOT_FOUND = 'No webhook with this id'

export const webhookRoutes = [
  route<{ url: string, events: string[] }>({
    method: 'post',
    path: '/v1/webhooks',
    permission: 'manage',
    summary: 'Register a webhook; its signing secret is returned only in this response',
    tag: TAG,
    body: CreateWebhookBody,
    responses: {
      201: { description: 'The webhook, active, with its secret', schema: CreatedWebhook },
      ...errorResponses({
        validation_error: 'Not an https URL, credentials in the URL, URL over 2048 characters or on a private address, ' +
          'empty or unknown event types',
        forbidden: 'The key lacks manage'
      })
    },
    handler: async (ctx) => {
      const { deps, auth, body } = ctx
      assertWebhookUrl(body.url, deps.config.webhook.allowPrivate)
      const w = buildWebhook(auth.org.id, body.url, body.events)
      await deps.cp.webhooks.put(`${w.org_id}.${w.id}`, w)
      deps.security.change('webhook.created', actorOf(ctx), { webhook_id: w.id, host: new URL(w.url).host, events: w.events })
      return { status: 201, body: { ...webhookView(w), secret: w.secret } }
    }
  }),
  route({
    method: 'get',
    path: '/v1/webhooks',
    permission: 'manage',
    summary: 'List the organisation\'s webhooks (without secrets), oldest first',
    tag: TAG,
    query: PageQuery,
    responses: {
      200: { description: 'A page of webhooks', schema: pageSchema(WebhookView) },
      ...errorResponses({ validation_error: 'Bad limit or cursor', forbidden: 'The key lacks manage' })
    },
    handler: ({ deps, auth, query }) => {
      return { status: 200, body: pageById(deps.cp.webhooks.list(`${auth.org.id}.`), query, deps.config.api.listMaxBytes, webhookView) }
    }
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/:id',
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Read one webhook (without its secret)',
    tag: TAG,
    responses: {
      200: { description: 'The webhook', schema: WebhookView },
      ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND })
    },
    handler: ({ deps, auth, params }) => ({
      status: 200, body: webhookView(ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook'))
    })
  }),
  route<PatchWebhook>({
    method: 'patch',
    path: '/v1/webhooks/:id',
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Change the events of a webhook, pause it, or make it active again (also after it failed)',
    tag: TAG,
    body: PatchWebhookBody,
    responses: {
      200: { description: 'The webhook after the change', schema: WebhookView },
      ...errorResponses({
        validation_error: 'Empty body, unknown event types or status', forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND
      })
    },
    handler: async (ctx) => {
      const { deps, auth, params, body } = ctx
      const w = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      const updated = await deps.cp.webhooks.modify(`${w.org_id}.${w.id}`, (cur): WebhookRecord => ({
        ...cur,
        ...(body.events !== undefined ? { events: [...new Set(body.events)] } : {}),
        ...(body.status !== undefined ? { status: body.status } : {}),
        updated_at: new Date().toISOString()
      }))
      if (updated === undefined) throw new ApiError('not_found', `No webhook with id ${w.id}.`)
      deps.security.change('webhook.updated', actorOf(ctx), { webhook_id: w.id, events: updated.events, status: updated.status })
      return { status: 200, body: webhookView(updated) }
    }
  }),
  route({
    method: 'del',
    path: '/v1/webhooks/:id',
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Delete a webhook; nothing more is delivered to it',
    tag: TAG,
    responses: { 204: { description: 'Deleted' }, ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND }) },
    handler: async (ctx) => {
      const { deps, auth, params } = ctx
      const w = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      await deps.cp.webhooks.delete(`${w.org_id}.${w.id}`)
      deps.security.change('webhook.deleted', actorOf(ctx), { webhook_id: w.id })
      return { status: 204 }
    }
  })
]
