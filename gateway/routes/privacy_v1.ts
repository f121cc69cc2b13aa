import { Type } from 'typebox'
import { route, operatorRoute } from '../http/route.ts'
import { errorResponses, operatorErrorResponses } from '../schemas/control.ts'
import { EMAIL_PATTERN } from '../control/suppressions.ts'
import { eraseAddress, EraseReceipt } from '../control/privacy.ts'
import { retentionView, setRetention, type RetentionChange } from '../control/retention.ts'
import { requireOrg } from '../control/org_admin.ts'

const TAG = 'Privacy'
const TOO_MANY_DAYS = 'A value not a whole number, or over the installation\'s maximum'

const EraseBody = Type.Object({
  email: Type.String({ minLength: 3, maxLength: 254, pattern: EMAIL_PATTERN, description: 'The address to erase (any case)' }),
  keep_suppressed: Type.Optional(Type.Boolean({
    description: 'Keep refusing sends to the address: the suppression list keeps its keyed hash instead of the address. Default false'
  }))
}, { additionalProperties: false })

const Days = (description: string, minimum: number): ReturnType<typeof Type.Union> =>
  Type.Union([Type.Integer({ minimum }), Type.Null()], { description })
const RetentionBody = Type.Object({
  messages_days: Type.Optional(Days('Days messages are kept; null: the installation\'s maximum', 1)),
  events_days: Type.Optional(Days('Days events are kept; null: the installation\'s maximum', 1)),
  content_days: Type.Optional(Days('Days message content is kept (0: none shown); null: the installation\'s maximum', 0))
}, { additionalProperties: false })
const Retention = Type.Object({
  messages_days: Type.Integer(),
  events_days: Type.Integer(),
  content_days: Type.Integer(),
  maximum: Type.Object({ messages_days: Type.Integer(), events_days: Type.Integer(), content_days: Type.Integer() })
})
const RETENTION_DOC = 'Applies to what is written from the change on (each Redis key gets its expiry when written); ' +
  'see docs/privacy.md#retention.'

export const privacyRoutes = [
  route<{ email: string, keep_suppressed?: boolean }>({
    method: 'post',
    path: '/v1/privacy/erase',
    // never the address in clear: its keyed hash
    audit: { action: 'privacy.erased', target: ({ reply }) => (reply as { address_hash: string }).address_hash },
    permission: 'manage',
    summary: 'Erase an address from every store Outbox keeps for the organisation, and answer what was removed',
    description: 'Messages to the address (whole, with their events and content), events naming it (tracking included), ' +
      'webhook attempts still waiting for those events and the delivery log entries of them, its suppression entry (and ' +
      'the delete marker under its key), and the organisation\'s access to received messages kept whole for erased ' +
      '`inbound.received` events (deleted once no other organisation reads them); audit entries naming it keep its keyed ' +
      'hash instead. With `keep_suppressed` the suppression list keeps a keyed hash of the address, so sends to it are ' +
      'still refused. Other organisations\' data is never touched. See docs/privacy.md.',
    tag: TAG,
    body: EraseBody,
    responses: {
      200: { description: 'The receipt: counts per store', schema: EraseReceipt },
      ...errorResponses({
        validation_error: 'email missing or not an address',
        forbidden: 'The key lacks manage',
        conflict: 'Mail to the address is still queued, scheduled or being delivered (`details.message_ids`), or received mail ' +
          'naming it is still waiting to be processed (`details.inbound_message_ids`, or `details.inbound_waiting` for a backlog ' +
          'too long to search; `Retry-After`); nothing was erased'
      })
    },
    handler: async ({ deps, auth, body, audit }) => {
      const receipt = await eraseAddress(deps, auth.org.id, body.email, body.keep_suppressed === true)
      audit.changes.removed = receipt.removed
      audit.changes.kept_suppressed = receipt.kept_suppressed
      return { status: 200, body: receipt }
    }
  }),
  route({
    method: 'get',
    path: '/v1/retention',
    permission: 'admin',
    summary: 'How many days the organisation\'s messages, events and message content are kept',
    tag: TAG,
    responses: { 200: { description: 'Retention', schema: Retention }, ...errorResponses({ forbidden: 'The key lacks admin' }) },
    handler: ({ deps, auth }) => ({
      status: 200, body: retentionView(deps.cp.orgs.get(auth.org.id) ?? auth.org, deps.config.messageContent.retentionDays)
    })
  }),
  route<RetentionChange>({
    method: 'patch',
    path: '/v1/retention',
    audit: { action: 'organization.retention_set', fields: ['messages_days', 'events_days', 'content_days'] },
    permission: 'admin',
    summary: 'Set how many days the organisation\'s messages, events and message content are kept',
    description: RETENTION_DOC,
    tag: TAG,
    body: RetentionBody,
    responses: {
      200: { description: 'Retention after the change', schema: Retention },
      ...errorResponses({ validation_error: TOO_MANY_DAYS, forbidden: 'The key lacks admin' })
    },
    handler: async ({ deps, auth, body }) => {
      const org = await setRetention(deps.cp, auth.org.id, body, deps.config.messageContent.retentionDays)
      return { status: 200, body: retentionView(org, deps.config.messageContent.retentionDays) }
    }
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/organizations/:id/retention',
    idPrefix: 'org',
    permission: 'operator',
    summary: 'An organisation\'s retention',
    tag: 'Operator',
    responses: { 200: { description: 'Retention', schema: Retention }, ...operatorErrorResponses({ not_found: 'No such organisation' }) },
    handler: ({ deps, params }) => ({
      status: 200, body: retentionView(requireOrg(deps.cp, params.id!), deps.config.messageContent.retentionDays)
    })
  }),
  operatorRoute<RetentionChange>({
    method: 'patch',
    path: '/v1/operator/organizations/:id/retention',
    audit: { action: 'organization.retention_set', fields: ['messages_days', 'events_days', 'content_days'] },
    idPrefix: 'org',
    permission: 'operator',
    summary: 'Set an organisation\'s retention',
    description: RETENTION_DOC,
    tag: 'Operator',
    body: RetentionBody,
    responses: {
      200: { description: 'Retention after the change', schema: Retention },
      ...operatorErrorResponses({ validation_error: TOO_MANY_DAYS, not_found: 'No such organisation' })
    },
    handler: async ({ deps, params, body }) => {
      requireOrg(deps.cp, params.id!)
      const org = await setRetention(deps.cp, params.id!, body, deps.config.messageContent.retentionDays)
      return { status: 200, body: retentionView(org, deps.config.messageContent.retentionDays) }
    }
  })
]
