import { Type } from 'typebox'
import { ApiError, EVENT_TYPES, ID_PATTERN } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { PageQuery, pageParams, pageSchema } from '../http/pagination.ts'
import {
  readModel, fromStore, EventEnvelopeSchema, ErrorDoc, StreamQuery, STREAM_NOT_FOUND_DOC, TagQuery, streamParam, tagParam
} from '../http/read_model.ts'
import { assertReadableStream } from '../http/readable_stream.ts'
import { EnvironmentQuery, environmentFilter } from '../http/environment_filter.ts'

const EventsQuery = Type.Object({
  ...PageQuery.properties,
  message_id: Type.Optional(Type.String({ pattern: ID_PATTERN })),
  type: Type.Optional(Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)))),
  ...EnvironmentQuery,
  ...TagQuery,
  ...StreamQuery
})

export const eventRoutes = [
  route({
    method: 'get',
    path: '/v1/events',
    permission: 'read',
    summary: 'List events, newest first',
    description: 'Events as webhook envelopes. `environment` is `live` (default) or `test` (events of sandbox messages); ' +
      '`message_id` keeps the events of one message; `type` keeps one event type; `tag` keeps events about messages sent with that tag ' +
      '(in the chosen environment); `stream` keeps events about messages of that message stream (`data.stream`): one the ' +
      'organisation has, or a deleted one of which messages, events or suppressions are still stored; any other is 422 ' +
      '`stream_not_found` naming `stream`. Events are kept 30 days.',
    tag: 'Events',
    query: EventsQuery,
    responses: {
      200: { description: 'A page of events', schema: pageSchema(EventEnvelopeSchema) },
      400: ErrorDoc('A query parameter is invalid (`validation_error` naming it)'),
      403: ErrorDoc('`message_id` is a message of another organisation'),
      422: ErrorDoc(STREAM_NOT_FOUND_DOC)
    },
    handler: async ({ deps, auth, query }) => {
      const page = pageParams(query, deps.config.api.listMaxBytes)
      await assertReadableStream(deps, auth.org.id, streamParam(query).stream)
      const messageId = query.get('message_id')
      const type = query.get('type')
      const body = await fromStore(readModel(deps).listEvents(auth.org.id, {
        ...page,
        ...(messageId !== null ? { message_id: messageId } : {}),
        ...(type !== null ? { type } : {}),
        environment: environmentFilter(query),
        ...tagParam(query),
        ...streamParam(query)
      }))
      return { status: 200, body }
    }
  }),
  // The live feed is a WebSocket served by gateway/ws/event_stream.ts; uWS hands upgrade requests to it
  // first, so this entry only answers plain GETs, and puts the endpoint in the generated documentation.
  route({
    method: 'get',
    path: '/v1/events/stream',
    permission: 'read',
    summary: 'Live feed of the organisation\'s events (WebSocket)',
    description: 'Connect with a WebSocket upgrade. First message: `{"type":"auth","key":"ob_…"}` (a key with `read`), ' +
      'then optionally `{"type":"filter","types":["delivered",…],"environment":"test","stream":"news"}` (any of the fields; ' +
      '`"stream"` keeps events whose `data.stream` is that message stream of the organisation, `null` lifts it; ' +
      'a stream the organisation does not have is an error message naming `stream`). ' +
      'The server sends `{"type":"ready"}`, then each event as a webhook envelope. ' +
      'The feed carries one environment\'s events: `live` unless `?environment=test` or a filter with `"environment":"test"` ' +
      'asks for sandbox (`ob_test_`) traffic; ' +
      'a bad `environment` is a 400 `validation_error` naming it on the upgrade, an error message naming it in a filter. ' +
      'Close codes: 4401 no or bad authentication within 5 s, or the key was revoked (or its rotation grace period ended) ' +
      'while the socket was open, 4403 key lacks `read`, 4429 too many failed authentications, ' +
      '1013 the client reads too slowly, 1001 the server is shutting down.',
    tag: 'Events',
    query: Type.Object({ ...EnvironmentQuery }),
    responses: {
      101: { description: 'Switching Protocols: the WebSocket is open' },
      400: ErrorDoc('A plain GET without a WebSocket upgrade')
    },
    handler: () => {
      throw new ApiError('validation_error', 'GET /v1/events/stream is a WebSocket endpoint; connect with an Upgrade: websocket request.', {
        field: 'upgrade'
      })
    }
  })
]
