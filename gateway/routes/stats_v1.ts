import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { STATS_COUNTERS, STATS_MAX_RANGE_MS, type StatsInterval } from '../../stores/read_model/mod.ts'
import { route } from '../http/route.ts'
import { readModel, fromStore, ErrorDoc, StreamQuery, STREAM_NOT_FOUND_DOC, TagQuery, streamParam, tagParam } from '../http/read_model.ts'
import { assertReadableStream } from '../http/readable_stream.ts'
import { EnvironmentQuery, environmentFilter } from '../http/environment_filter.ts'

const DEFAULT_RANGE_MS = 7 * 24 * 3600_000 // 7 days

const StatsQuery = Type.Object({
  from: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; default `to` minus 7 days' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601, exclusive; default now' })),
  interval: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')], {
    description: 'also return `series` per hour or UTC day'
  })),
  ...EnvironmentQuery,
  ...TagQuery,
  ...StreamQuery
})

const Counts = Type.Object(Object.fromEntries(STATS_COUNTERS.map((c) => [c, Type.Integer({ minimum: 0 })])))
const StatsResponse = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  interval: Type.Optional(Type.Union([Type.Literal('hour'), Type.Literal('day')])),
  counts: Counts,
  series: Type.Optional(Type.Array(Type.Object({ start: Type.String({ format: 'date-time' }), counts: Counts })))
})

function parseDate (query: URLSearchParams, field: 'from' | 'to'): number | undefined {
  const raw = query.get(field)
  if (raw === null) return undefined
  const ms = Date.parse(raw)
  if (!Number.isFinite(ms)) throw ApiError.validation([{ field, message: 'must be an ISO 8601 date-time' }])
  return ms
}

export const statsRoutes = [
  route({
    method: 'get',
    path: '/v1/stats',
    permission: 'read',
    summary: 'Counts of messages sent and of each event type over a time range',
    description: 'Counters are kept per UTC hour: every hour that overlaps [from, to) is counted whole. ' +
      '`sent` is messages handed to delivery: a message sent at once in the hour it was accepted, a scheduled one in the hour ' +
      'the engine took it up (not while it waits, never when canceled). ' +
      '`environment` is `live` (default) or `test` (sandbox traffic, counted apart). ' +
      '`tag` counts only messages sent with that tag and their events; `stream` (not with `tag`) only those of one message stream: ' +
      'one the organisation has, or a deleted one of which messages, events or suppressions are still stored; any other is 422 ' +
      '`stream_not_found` naming `stream`. ' +
      'Default range: the last 7 days; at most 90 days.',
    tag: 'Statistics',
    query: StatsQuery,
    responses: {
      200: { description: 'Counts over the range', schema: StatsResponse },
      400: ErrorDoc('`from`/`to` not ISO 8601, `from` not before `to`, a range over 90 days, a bad `interval`, `tag` or `stream`, ' +
        'or both `tag` and `stream`'),
      422: ErrorDoc(STREAM_NOT_FOUND_DOC)
    },
    handler: async ({ deps, auth, query }) => {
      const toMs = parseDate(query, 'to') ?? Date.now()
      const fromMs = parseDate(query, 'from') ?? toMs - DEFAULT_RANGE_MS
      if (fromMs >= toMs) throw ApiError.validation([{ field: 'from', message: 'must be before to' }])
      if (toMs - fromMs > STATS_MAX_RANGE_MS) {
        throw ApiError.validation([{ field: 'from', message: 'the range from..to may not exceed 90 days' }])
      }
      const interval = (query.get('interval') ?? undefined) as StatsInterval | undefined
      const { tag } = tagParam(query)
      const { stream } = streamParam(query)
      if (tag !== undefined && stream !== undefined) {
        throw ApiError.validation([{ field: 'stream', message: 'cannot be combined with tag' }])
      }
      await assertReadableStream(deps, auth.org.id, stream)
      const result = await fromStore(
        readModel(deps).stats(auth.org.id, fromMs, toMs, interval, environmentFilter(query), tag, stream)
      )
      return {
        status: 200,
        body: {
          from: new Date(fromMs).toISOString(),
          to: new Date(toMs).toISOString(),
          ...(interval !== undefined ? { interval } : {}),
          ...result
        }
      }
    }
  })
]
