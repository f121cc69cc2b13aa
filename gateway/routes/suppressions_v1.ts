import { Type } from 'typebox'
import { ApiError, STREAM_ID_PATTERN, StreamId } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { PageQuery, pageSchema } from '../http/pagination.ts'
import {
  EMAIL_PATTERN, expiryOf, isEmail, normalizeEmail, pageSuppressions, suppress, suppressionFilter, suppressionView, unsuppress
} from '../control/suppressions.ts'
import { IMPORT_CHECK_MAX_QUEUE } from '../import_check_pool.ts'
import {
  IMPORT_MAX_ADDRESSES, IMPORT_MAX_BODY_BYTES, IMPORT_REFUSED_LISTED, writeImport
} from '../control/suppression_import.ts'
import { EXPORT_HEADER, exportSuppressions } from '../control/suppression_export.ts'
import { SuppressionView, errorResponses } from '../schemas/control.ts'
import { EnvironmentQuery, environmentFilter } from '../http/environment_filter.ts'
import { assertReadableStream } from '../http/readable_stream.ts'

const REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'manual'] as const
const Email = Type.String({ minLength: 3, maxLength: 254, pattern: EMAIL_PATTERN })
const FilterQuery = {
  reason: Type.Optional(Type.Enum(REASONS, { description: 'Only entries of this reason' })),
  since: Type.Optional(Type.String({ maxLength: 40, description: 'Only entries created at or after this ISO 8601 date-time' })),
  until: Type.Optional(Type.String({ maxLength: 40, description: 'Only entries created before this ISO 8601 date-time' })),
  stream: Type.Optional(Type.String({
    pattern: STREAM_ID_PATTERN,
    description: 'Only entries that suppress sends on this message stream: those for every stream and the stream\'s own. ' +
      'A stream the organisation has, or a deleted one of which messages, events or suppressions are still stored; any other ' +
      'is 422 `stream_not_found` naming `stream`'
  })),
  ...EnvironmentQuery
}
const ListQuery = Type.Object({
  ...PageQuery.properties,
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Only this address (case-insensitive)' })),
  ...FilterQuery
})
const ExportQuery = Type.Object(FilterQuery)
const AddBody = Type.Object({
  email: Email,
  expires_at: Type.Optional(Type.String({
    maxLength: 40, description: 'ISO 8601 date-time in the future after which the entry no longer suppresses'
  }))
}, { additionalProperties: false })
const ImportItem = Type.Object({
  email: Type.String({ maxLength: 254 }),
  reason: Type.Optional(Type.Enum(REASONS, { description: 'Default manual' })),
  expires_at: Type.Optional(Type.String({ description: 'ISO 8601 date-time in the future; reason manual only' })),
  stream: Type.Optional(Type.String({
    description: 'A message stream of the organisation: a broadcast stream\'s id makes the entry that stream\'s own; ' +
      'absent, empty or `transactional`: every stream. A stream the organisation does not have refuses the line, and so does ' +
      'a broadcast stream with reason `hard_bounce` (a hard bounce suppresses every stream)'
  }))
}, { additionalProperties: false })
const ImportBody = Type.Object({ addresses: Type.Array(ImportItem, { maxItems: IMPORT_MAX_ADDRESSES }) }, { additionalProperties: false })
const ImportCsv = Type.String({
  description: 'A header line naming `email` and optionally `reason`, `expires_at` and `stream` (any order; `created_at` and ' +
    '`message_id` are read past), then one address a line'
})
const ImportReport = Type.Object({
  imported: Type.Integer({ description: 'Addresses added' }),
  already_suppressed: Type.Integer({ description: 'Addresses already on the list (or given twice), left as they were' }),
  refused_count: Type.Integer({ description: 'Lines refused' }),
  refused: Type.Array(Type.Object({
    line: Type.Integer({ description: 'CSV line (the header is line 1), or position in addresses (from 1)' }),
    email: Type.String(),
    reason: Type.String({ description: 'Why the line was refused' })
  }), { description: `The first ${IMPORT_REFUSED_LISTED} refused lines` }),
  imported_by_reason: Type.Object({
    hard_bounce: Type.Integer(), complaint: Type.Integer(), unsubscribe: Type.Integer(), manual: Type.Integer()
  })
})

const TAG = 'Suppressions'
const UNKNOWN_STREAM = '`stream` is none of the organisation\'s streams, nor a deleted one of which messages, events or ' +
  'suppressions are still stored (the same answer whether or not another organisation has a stream of that id)'

export const suppressionRoutes = [
  route({
    method: 'get',
    path: '/v1/suppressions',
    permission: 'read',
    summary: 'List suppressed addresses (hard bounces, complaints, unsubscribes, manual), in address order',
    description: 'The suppression list is live state: sandbox (`ob_test_`) outcomes never add to it, so `environment=test` lists ' +
      'nothing; `live` is the default. `reason`, `since` and `until` filter; entries past their `expires_at` are not listed.',
    tag: TAG,
    query: ListQuery,
    responses: {
      200: { description: 'A page of suppressions', schema: pageSchema(SuppressionView) },
      ...errorResponses({
        validation_error: 'Bad limit, cursor or filter', forbidden: 'The key lacks read', stream_not_found: UNKNOWN_STREAM
      })
    },
    handler: async ({ deps, auth, query }) => {
      const { stream } = suppressionFilter(query)
      await assertReadableStream(deps, auth.org.id, stream)
      if (environmentFilter(query) === 'test') {
        return { status: 200, body: { data: [], has_more: false, next_cursor: null } }
      }
      const page = pageSuppressions(deps.cp, auth.org.id, query, deps.config.api.listMaxBytes)
      return { status: 200, body: { ...page, data: page.data.map(suppressionView) } }
    }
  }),
  route({
    method: 'get',
    path: '/v1/suppressions/export',
    permission: 'read',
    summary: 'Download the suppression list as CSV (email,reason,created_at,expires_at,message_id,stream), in address order',
    description: 'Streamed: the answer starts at once and its rows follow as the client reads them. Takes the filters of the ' +
      'list. `stream` is the broadcast stream of an entry of that stream alone, empty for an entry of every stream. ' +
      'The columns `email`, `reason`, `expires_at` and `stream` are what an import reads back.',
    tag: TAG,
    query: ExportQuery,
    responses: {
      200: { description: 'The CSV file', contentType: 'text/csv', schema: Type.String() },
      ...errorResponses({ validation_error: 'Bad filter', forbidden: 'The key lacks read', stream_not_found: UNKNOWN_STREAM })
    },
    handler: async ({ deps, auth, query }) => {
      const filter = suppressionFilter(query)
      await assertReadableStream(deps, auth.org.id, filter.stream)
      const headers = { 'Content-Disposition': 'attachment; filename="suppressions.csv"' }
      const contentType = 'text/csv; charset=utf-8'
      if (environmentFilter(query) === 'test') return { status: 200, headers, raw: { contentType, data: EXPORT_HEADER } }
      return { status: 200, headers, stream: { contentType, chunks: exportSuppressions(deps.cp, auth.org.id, filter) } }
    }
  }),
  route({
    method: 'post',
    path: '/v1/suppressions/import',
    permission: 'manage',
    summary: `Suppress up to ${IMPORT_MAX_ADDRESSES} addresses at once, from JSON or CSV, with a report line by line`,
    description: 'JSON `{"addresses": [{"email", "reason"?, "expires_at"?, "stream"?}]}` or `text/csv` with a header naming ' +
      '`email` and optionally `reason`, `expires_at` and `stream`. `reason` defaults to `manual`; `expires_at` is for `manual` only; ' +
      '`stream` (a broadcast stream of the organisation) makes the entry that stream\'s own, empty or absent is every stream. ' +
      'Each bad line (a stream the organisation does not have among them, or a `hard_bounce` naming a broadcast stream: a hard ' +
      'bounce suppresses every stream) is refused and reported, the others are imported; ' +
      'an address already suppressed (on that stream) keeps its entry. The body may be up to ' +
      `${IMPORT_MAX_BODY_BYTES / 1024 / 1024} MB.`,
    tag: TAG,
    audit: { action: 'suppression.imported' },
    bodyDoc: { 'application/json': ImportBody, 'text/csv': ImportCsv },
    maxBodyBytes: IMPORT_MAX_BODY_BYTES,
    responses: {
      200: { description: 'What was imported, and every refused line', schema: ImportReport },
      ...errorResponses({
        validation_error: 'Not JSON with addresses, or a CSV without an email header, or another Content-Type',
        forbidden: 'The key lacks manage',
        payload_too_large: `More than ${IMPORT_MAX_ADDRESSES} addresses, or a body over ${IMPORT_MAX_BODY_BYTES / 1024 / 1024} MB`,
        service_unavailable: `${IMPORT_CHECK_MAX_QUEUE} imports are already waiting to be checked; retry after Retry-After (5 s)`
      })
    },
    handler: async ({ deps, auth, headers, rawBody, audit }) => {
      // read and checked on a thread of its own, written from here a window at a time (gateway/import_check_pool.ts)
      const streams = deps.cp.streams.list(auth.org.id).map((st) => st.id)
      const checked = await deps.importChecker.check(rawBody, headers.contentType, streams)
      const { summary, error } = await writeImport(deps.cp, auth.org.id, checked)
      // One entry for the whole import: how many were added, by reason, and how many lines were refused.
      audit.count = summary.imported
      audit.changes.imported_by_reason = summary.imported_by_reason
      audit.changes.already_suppressed = summary.already_suppressed
      audit.changes.refused = summary.refused_count
      if (summary.imported === 0) audit.skip = true
      for (const reason of REASONS) {
        if (summary.imported_by_reason[reason] > 0) deps.metrics.suppressionsAdded[reason].inc(summary.imported_by_reason[reason])
      }
      // stopped part-way (a full store): answered with the error, and what it wrote is still audited
      if (error !== undefined) { audit.partial = true; throw error }
      return { status: 200, body: summary }
    }
  }),
  route<{ email: string, expires_at?: string }>({
    method: 'post',
    path: '/v1/suppressions',
    audit: { action: 'suppression.added', statuses: [201], target: ({ reply }) => reply.email },
    permission: 'manage',
    summary: 'Suppress an address by hand (reason manual); sends to it are then skipped',
    description: 'With `expires_at` the entry stops suppressing at that instant and is removed soon after.',
    tag: TAG,
    body: AddBody,
    responses: {
      201: { description: 'Suppressed', schema: SuppressionView },
      200: { description: 'The address was already suppressed; its existing entry', schema: SuppressionView },
      ...errorResponses({
        validation_error: 'email missing or not an address, expires_at not a date-time or not in the future',
        forbidden: 'The key lacks manage'
      })
    },
    handler: async ({ deps, auth, body }) => {
      let expiresAt: string | undefined
      if (body.expires_at !== undefined) {
        const e = expiryOf(body.expires_at)
        if ('problem' in e) throw ApiError.validation([{ field: 'expires_at', message: e.problem }])
        expiresAt = e.iso
      }
      const { record, created } = await suppress(deps.cp, auth.org.id, body.email, expiresAt)
      if (created) deps.metrics.suppressionsAdded.manual.inc()
      return { status: created ? 201 : 200, body: suppressionView(record) }
    }
  }),
  route({
    method: 'del',
    path: '/v1/suppressions/:email',
    // the address as the list holds it, whatever case the path gave
    audit: { action: 'suppression.removed', target: ({ params }) => normalizeEmail(params.email!.trim()) },
    permission: 'manage',
    summary: 'Remove an address from the suppression list so it can be sent to again',
    description: 'Removes the entry for every stream; with `stream`, the entry of that broadcast stream only.',
    tag: TAG,
    query: Type.Object({ stream: Type.Optional(StreamId) }),
    responses: {
      204: { description: 'Removed' },
      ...errorResponses({ forbidden: 'The key lacks manage', not_found: 'The address is not suppressed (or is not an address)' })
    },
    handler: async ({ deps, auth, params, query, audit }) => {
      const email = params.email!.trim()
      if (!isEmail(email)) throw new ApiError('not_found', `${email} is not on the suppression list.`)
      const stream = query.get('stream') ?? undefined
      await unsuppress(deps.cp, auth.org.id, email, stream)
      // one broadcast stream's entry, told apart from the entry for every stream
      if (stream !== undefined) audit.changes.stream = stream
      return { status: 204 }
    }
  })
]
