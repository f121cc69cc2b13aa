import { Type } from 'typebox'
import { Address, type MessageStatus } from '../../protocol/mod.ts'
import { MESSAGE_EVENTS_INLINE } from '../../stores/read_model/mod.ts'
import { route } from '../http/route.ts'
import { PageQuery, pageParams, pageSchema } from '../http/pagination.ts'
import { readModel, fromStore, MessageSummarySchema, MessageStatusSchema, EventEnvelopeSchema, ErrorDoc, TagQuery, tagParam } from '../http/read_model.ts'

const MessagesQuery = Type.Object({
  ...PageQuery.properties,
  status: Type.Optional(MessageStatusSchema),
  to: Type.Optional(Address),
  ...TagQuery
})

const MessageDetailSchema = Type.Object({ ...MessageSummarySchema.properties, events: Type.Array(EventEnvelopeSchema) })

export const messageReadRoutes = [
  route({
    method: 'get',
    path: '/v1/messages',
    permission: 'read',
    summary: 'List messages, newest first',
    description: '`status` keeps messages in that status; `to` keeps messages with that recipient (to, cc or bcc, case-insensitive); `tag` keeps messages sent with that tag. Messages are kept 30 days.',
    tag: 'Messages',
    query: MessagesQuery,
    responses: {
      200: { description: 'A page of messages', schema: pageSchema(MessageSummarySchema) },
      400: ErrorDoc('A query parameter is invalid (`validation_error` naming it)')
    },
    handler: async ({ deps, auth, query }) => {
      const page = pageParams(query)
      const status = query.get('status') as MessageStatus | null
      const to = query.get('to')
      const body = await fromStore(readModel(deps).listMessages(auth.org.id, {
        ...page,
        ...(status !== null ? { status } : {}),
        ...(to !== null ? { to } : {}),
        ...tagParam(query)
      }))
      return { status: 200, body }
    }
  }),
  route({
    method: 'get',
    path: '/v1/messages/:id',
    idPrefix: 'msg',
    permission: 'read',
    summary: 'One message with its status and events',
    description: `\`events\` are webhook envelopes, oldest first (the most recent ${MESSAGE_EVENTS_INLINE}; GET /v1/events?message_id= pages through all).`,
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
