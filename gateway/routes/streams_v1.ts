import { Type } from 'typebox'
import { ApiError, STREAM_ID_PATTERN, StreamId, TRANSACTIONAL_STREAM, type StreamRecord } from '../../protocol/mod.ts'
import type { StreamFields } from '../../stores/control_plane/mod.ts'
import { route } from '../http/route.ts'
import { errorResponses, FORBIDDEN_PERMISSION } from '../schemas/control.ts'

const Name = Type.String({ minLength: 1, maxLength: 200 })
const Description = Type.String({ maxLength: 1000 })

const StreamView = Type.Object({
  id: Type.String({ description: '`transactional`, or the id the broadcast stream was created with' }),
  type: Type.Union([Type.Literal('transactional'), Type.Literal('broadcast')]),
  name: Type.String(),
  description: Type.Optional(Type.String()),
  created_at: Type.Optional(Type.String({ format: 'date-time', description: 'Absent on the transactional stream' })),
  updated_at: Type.Optional(Type.String({ format: 'date-time' }))
})

const CreateStreamBody = Type.Object({
  id: StreamId,
  name: Name,
  description: Type.Optional(Description)
}, { additionalProperties: false })
const PatchStreamBody = Type.Object({
  name: Type.Optional(Name),
  description: Type.Optional(Type.Union([Description, Type.Null()], { description: 'null removes the description' }))
}, { additionalProperties: false, minProperties: 1 })

/** The transactional stream every organisation has: never stored, the same for all. */
const TRANSACTIONAL_VIEW = {
  id: TRANSACTIONAL_STREAM,
  type: 'transactional',
  name: 'Transactional',
  description: 'Mail a recipient expects from an action of theirs (receipts, password resets); the default of every send.'
} as const

function streamView (s: StreamRecord): Record<string, unknown> {
  return {
    id: s.id,
    type: s.type,
    name: s.name,
    ...(s.description !== undefined ? { description: s.description } : {}),
    created_at: s.created_at,
    updated_at: s.updated_at
  }
}

const TAG = 'Streams'
const PARAMS = { stream: STREAM_ID_PATTERN }
const NOT_FOUND = 'The organisation has no stream with this id'
const PROTECTED = 'The transactional stream cannot be changed or deleted'

function transactionalRefused (id: string): void {
  if (id === TRANSACTIONAL_STREAM) throw new ApiError('unprocessable', 'The transactional stream cannot be changed or deleted.')
}

export const streamRoutes = [
  route({
    method: 'get',
    path: '/v1/streams',
    permission: 'read',
    summary: 'List the organisation\'s message streams: transactional first, then the broadcast streams by id',
    tag: TAG,
    responses: {
      200: {
        description: 'Every stream of the organisation (one page: an organisation has at most 21)',
        schema: Type.Object({ data: Type.Array(StreamView), has_more: Type.Boolean(), next_cursor: Type.Null() })
      },
      ...errorResponses({ forbidden: FORBIDDEN_PERMISSION })
    },
    handler: ({ deps, auth }) => ({
      status: 200,
      body: { data: [TRANSACTIONAL_VIEW, ...deps.cp.streams.list(auth.org.id).map(streamView)], has_more: false, next_cursor: null }
    })
  }),
  route<{ id: string, name: string, description?: string }>({
    method: 'post',
    path: '/v1/streams',
    audit: { action: 'stream.created', fields: ['name'] },
    permission: 'manage',
    summary: 'Create a broadcast stream',
    description: 'Mail sent on a broadcast stream always carries one-click unsubscribe, and an unsubscribe or complaint from it ' +
      'suppresses the address on that stream only (docs/streams.md).',
    tag: TAG,
    body: CreateStreamBody,
    responses: {
      201: { description: 'The stream', schema: StreamView },
      ...errorResponses({
        validation_error: 'Missing or invalid fields',
        forbidden: 'The key lacks manage',
        conflict: 'The organisation has a stream with this id (transactional included)',
        unprocessable: 'The organisation has 20 broadcast streams already'
      })
    },
    handler: async ({ deps, auth, body }) => {
      const fields = { name: body.name, ...(body.description !== undefined ? { description: body.description } : {}) }
      const s = await deps.cp.streams.create(auth.org.id, body.id, fields)
      return { status: 201, body: streamView(s) }
    }
  }),
  route({
    method: 'get',
    path: '/v1/streams/:stream',
    paramPatterns: PARAMS,
    permission: 'read',
    summary: 'Read one message stream',
    tag: TAG,
    responses: {
      200: { description: 'The stream', schema: StreamView },
      ...errorResponses({ forbidden: FORBIDDEN_PERMISSION, not_found: NOT_FOUND })
    },
    handler: ({ deps, auth, params }) => {
      const id = params.stream!
      if (id === TRANSACTIONAL_STREAM) return { status: 200, body: TRANSACTIONAL_VIEW }
      const s = deps.cp.streams.get(auth.org.id, id)
      if (s === undefined) throw new ApiError('not_found', `No stream with id ${id}.`)
      return { status: 200, body: streamView(s) }
    }
  }),
  route<StreamFields>({
    method: 'patch',
    path: '/v1/streams/:stream',
    paramPatterns: PARAMS,
    audit: {
      action: 'stream.updated',
      fields: ['name'],
      target: ({ params }) => params.stream,
      detail: ({ body }) => ({ fields: Object.keys(body) })
    },
    permission: 'manage',
    summary: 'Change the name or description of a broadcast stream',
    tag: TAG,
    body: PatchStreamBody,
    responses: {
      200: { description: 'The stream after the change', schema: StreamView },
      ...errorResponses({
        validation_error: 'Empty body or invalid fields', forbidden: 'The key lacks manage', not_found: NOT_FOUND, unprocessable: PROTECTED
      })
    },
    handler: async ({ deps, auth, params, body }) => {
      const id = params.stream!
      transactionalRefused(id)
      const s = await deps.cp.streams.update(auth.org.id, id, body)
      if (s === undefined) throw new ApiError('not_found', `No stream with id ${id}.`)
      return { status: 200, body: streamView(s) }
    }
  }),
  route({
    method: 'del',
    path: '/v1/streams/:stream',
    paramPatterns: PARAMS,
    audit: { action: 'stream.deleted', target: ({ params }) => params.stream },
    permission: 'manage',
    summary: 'Delete a broadcast stream',
    description: 'Later sends naming it are refused (422 `stream_not_found`); mail already queued on it is delivered, and its ' +
      'messages, events and suppressions stay.',
    tag: TAG,
    responses: {
      204: { description: 'Deleted' },
      ...errorResponses({ forbidden: 'The key lacks manage', not_found: NOT_FOUND, unprocessable: PROTECTED })
    },
    handler: async ({ deps, auth, params }) => {
      const id = params.stream!
      transactionalRefused(id)
      if (!await deps.cp.streams.remove(auth.org.id, id)) throw new ApiError('not_found', `No stream with id ${id}.`)
      return { status: 204 }
    }
  })
]
