import { Type } from 'typebox'
import { ApiError, SUBSCRIBABLE_EVENT_TYPES, WebhookFilters, type WebhookRecord } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { PageQuery, pageById, pageSchema } from '../http/pagination.ts'
import { MAX_WEBHOOK_URL_LENGTH } from '../control/webhook_url.ts'
import { assertWebhookUrl, buildWebhook, checkedWebhookFilters, webhookView } from '../control/webhooks.ts'
import { CreatedWebhook, FORBIDDEN_OTHER_ORG, WebhookView, errorResponses } from '../schemas/control.ts'

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

const CreateWebhookBody = Type.Object({
  url: Url, events: EventTypes, filters: Type.Optional(WebhookFilters)
}, { additionalProperties: false })
const PatchWebhookBody = Type.Object({
  url: Type.Optional(Url),
  events: Type.Optional(EventTypes),
  /** Replaces the filters whole; `{}` removes them. */
  filters: Type.Optional(WebhookFilters),
  status: Type.Optional(Type.Enum(['active', 'paused'], { description: '`active` also revives a failed webhook' }))
}, { additionalProperties: false, minProperties: 1 })

interface PatchWebhook { url?: string, events?: string[], filters?: WebhookFilters, status?: 'active' | 'paused' }

const FILTER_ERRORS = 'a domain that is not one of the organisation\'s, more than 20 tags or domains, a tag that is not 1 to 64 ' +
  'of A-Z a-z 0-9 _ -, an unknown environment or filter'
const STREAM_NOT_FOUND = 'A stream in `filters.streams` that is not one of the organisation\'s (deleted ones included), named in ' +
  '`field` (`filters.streams[i]`), each in `errors`; the same answer whether or not another organisation has a stream of that id'

const TAG = 'Webhooks'
const NOT_FOUND = 'No webhook with this id'

export const webhookRoutes = [
  route<{ url: string, events: string[], filters?: WebhookFilters }>({
    method: 'post',
    path: '/v1/webhooks',
    audit: { action: 'webhook.created', fields: ['events', 'filters'], detail: ({ body }) => ({ host: new URL(body.url).host }) },
    permission: 'manage',
    summary: 'Register a webhook; its signing secret is returned only in this response',
    tag: TAG,
    body: CreateWebhookBody,
    responses: {
      201: { description: 'The webhook, active, with its secret', schema: CreatedWebhook },
      ...errorResponses({
        validation_error: 'Not an https URL, credentials in the URL, URL over 2048 characters or on a private address, ' +
          'empty or unknown event types; ' + FILTER_ERRORS,
        forbidden: 'The key lacks manage',
        stream_not_found: STREAM_NOT_FOUND
      })
    },
    handler: async (ctx) => {
      const { deps, auth, body } = ctx
      assertWebhookUrl(body.url, deps.config.webhook.allowPrivate)
      const filters = checkedWebhookFilters(deps.cp, auth.org.id, body.filters)
      const w = buildWebhook(auth.org.id, body.url, body.events, filters)
      await deps.cp.webhooks.put(`${w.org_id}.${w.id}`, w)
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
    audit: { action: 'webhook.updated', fields: ['events', 'status', 'filters'] },
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Change the URL, events or filters of a webhook, pause it, or make it active again (also after it failed)',
    tag: TAG,
    body: PatchWebhookBody,
    responses: {
      200: { description: 'The webhook after the change', schema: WebhookView },
      ...errorResponses({
        validation_error: 'Empty body, unknown event types or status, a URL refused as at creation; ' + FILTER_ERRORS,
        forbidden: FORBIDDEN_OTHER_ORG,
        not_found: NOT_FOUND,
        stream_not_found: STREAM_NOT_FOUND
      })
    },
    handler: async (ctx) => {
      const { deps, auth, params, body } = ctx
      const w = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      if (body.url !== undefined) assertWebhookUrl(body.url, deps.config.webhook.allowPrivate)
      const filters = body.filters !== undefined ? checkedWebhookFilters(deps.cp, auth.org.id, body.filters) : undefined
      let previousUrl = w.url
      const updated = await deps.cp.webhooks.modify(`${w.org_id}.${w.id}`, (cur): WebhookRecord => {
        previousUrl = cur.url
        const { filters: _old, ...rest } = cur
        return {
          ...(body.filters !== undefined ? rest : cur),
          ...(body.url !== undefined ? { url: body.url } : {}),
          ...(body.events !== undefined ? { events: [...new Set(body.events)] } : {}),
          ...(filters !== undefined ? { filters } : {}),
          ...(body.status !== undefined ? { status: body.status } : {}),
          updated_at: new Date().toISOString()
        }
      })
      if (updated === undefined) throw new ApiError('not_found', `No webhook with id ${w.id}.`)
      // Hosts only: a URL's path or query may hold a receiver's token.
      if (updated.url !== previousUrl) {
        const host = new URL(updated.url).host
        const previousHost = new URL(previousUrl).host
        ctx.audit.changes.host = host
        if (host !== previousHost) ctx.audit.changes.previous_host = previousHost
      }
      return { status: 200, body: webhookView(updated) }
    }
  }),
  route({
    method: 'del',
    path: '/v1/webhooks/:id',
    audit: { action: 'webhook.deleted' },
    idPrefix: 'wh',
    permission: 'manage',
    summary: 'Delete a webhook; nothing more is delivered to it',
    tag: TAG,
    responses: { 204: { description: 'Deleted' }, ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND }) },
    handler: async (ctx) => {
      const { deps, auth, params } = ctx
      const w = ownedRecord(deps.cp.webhooks, auth.org.id, params.id!, 'webhook')
      await deps.cp.webhooks.delete(`${w.org_id}.${w.id}`)
      return { status: 204 }
    }
  })
]
