import { Type } from 'typebox'
import { type MessageStatus } from '../../protocol/mod.ts'
import { MESSAGE_EVENTS_INLINE } from '../../stores/read_model/mod.ts'
import { route } from '../http/route.ts'
import { PageQuery, pageParams, pageSchema } from '../http/pagination.ts'
import {
  readModel, fromStore, MessageSummarySchema, MessageStatusSchema, EventEnvelopeSchema, RecipientStateSchema, ErrorDoc, TagQuery, tagParam,
  StreamQuery, STREAM_NOT_FOUND_DOC, streamParam
} from '../http/read_model.ts'
import { EnvironmentQuery, environmentFilter } from '../http/environment_filter.ts'
import { assertReadableStream } from '../http/readable_stream.ts'
import { RecipientPrefixQuery, recipientPrefixFilter } from '../http/recipient_prefix_filter.ts'

const MessagesQuery = Type.Object({
  ...PageQuery.properties,
  status: Type.Optional(MessageStatusSchema),
  ...RecipientPrefixQuery,
  ...EnvironmentQuery,
  ...TagQuery,
  ...StreamQuery,
  stuck: Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], {
    description: '`true` keeps only stuck messages (see `stuck`), most recently due first; `false` (the default) keeps all'
  }))
})

const MessageDetailSchema = Type.Object({
  ...MessageSummarySchema.properties,
  recipients: Type.Array(RecipientStateSchema),
  events: Type.Array(EventEnvelopeSchema)
})

export const messageReadRoutes = [
  route({
    method: 'get',
    path: '/v1/messages',
    permission: 'read',
    summary: 'List messages, newest first',
    description: '`environment` is `live` (default) or `test`: sandbox traffic (sent with an `ob_test_` key) is listed only with `test`. ' +
      '`status` keeps messages in that status; `to` keeps messages with a recipient (to, cc or bcc) whose address starts with it, ' +
      'case-insensitively, listed in address order and newest first per address; `tag` keeps messages sent with that tag; ' +
      '`stream` keeps messages sent on that message stream: one the organisation has, or a deleted one of which messages, ' +
      'events or suppressions are still stored; any other is 422 `stream_not_found` naming `stream`; ' +
      '`stuck=true` keeps stuck messages (waiting for an attempt, with `next_attempt_at` more than the grace, OB_STUCK_AFTER_MS, ' +
      'in the past), listed by `next_attempt_at`, most recent first. ' +
      'Filters combine: a message is listed only when it matches every one given. Messages are kept 30 days.',
    tag: 'Messages',
    query: MessagesQuery,
    responses: {
      200: { description: 'A page of messages', schema: pageSchema(MessageSummarySchema) },
      400: ErrorDoc('A query parameter is invalid (`validation_error` naming it)'),
      422: ErrorDoc(STREAM_NOT_FOUND_DOC)
    },
    handler: async ({ deps, auth, query }) => {
      const page = pageParams(query, deps.config.api.listMaxBytes)
      await assertReadableStream(deps, auth.org.id, streamParam(query).stream)
      const status = query.get('status') as MessageStatus | null
      const body = await fromStore(readModel(deps).listMessages(auth.org.id, {
        ...page,
        ...(status !== null ? { status } : {}),
        ...recipientPrefixFilter(query),
        environment: environmentFilter(query),
        ...tagParam(query),
        ...streamParam(query),
        ...(query.get('stuck') === 'true' ? { stuck: true } : {})
      }))
      return { status: 200, body }
    }
  }),
  route({
    method: 'get',
    path: '/v1/messages/:id',
    idPrefix: 'msg',
    permission: 'read',
    summary: 'One message with its status, its recipients and events',
    description: '`recipients`: each distinct recipient of the request (to, cc and bcc, then those skipped as suppressed, status ' +
      '`suppressed` with the list\'s `reason`) with its own status, attempts and last event time. ' +
      'The message `status` follows from its recipients: `deferred` while one is deferred; else, while some have no outcome yet, ' +
      '`sending` when another has one, else `queued` (or `scheduled`); else the first of bounced, complained, failed, delivered that ' +
      'a recipient has (suppressed ones never set it). `delivered_count` counts complained recipients as delivered. ' +
      '`next_attempt_at` and `stuck`: as in GET /v1/messages. ' +
      `\`events\` are webhook envelopes, oldest first (the most recent ${MESSAGE_EVENTS_INLINE}; ` +
      'GET /v1/events?message_id= pages through all).',
    tag: 'Messages',
    responses: {
      200: { description: 'The message', schema: MessageDetailSchema },
      403: ErrorDoc('The message belongs to another organisation'),
      404: ErrorDoc('No message with this id (or older than 30 days)')
    },
    handler: async ({ deps, auth, params }) => {
      const body = await fromStore(readModel(deps).getMessage(auth.org.id, params.id!))
      return { status: 200, body }
    }
  })
]
