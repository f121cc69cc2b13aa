import { EVENT_TYPES, STREAM_ID_MESSAGE, isStreamId, notOrgStreamMessage } from '../../protocol/mod.ts'
import type { SocketState } from './stream_socket.ts'
import { ENVIRONMENT_MESSAGE, isEnvironment } from './upgrade_refusals.ts'

const TYPE_NAMES = new Set<string>([...EVENT_TYPES, 'inbound'])

/** The fields of a `filter` message; each given one replaces what the socket had. */
export interface FilterFields { types?: unknown, environment?: unknown, stream?: unknown }

/**
 * A `filter` message on the live feed: `types`, `environment` and `stream` each replace what the socket had when
 * given (`"stream": null` forwards every stream's events again); one of them must be. `streamExists` says whether
 * the socket's organisation has the stream: a stream it does not have is the `stream_not_found` of the HTTP reads
 * (a malformed id their `validation_error`), whether or not another organisation has one of that id. The feed is
 * about events to come, so a deleted stream is refused like any other the organisation does not have. Answers the
 * message to send back: the filter now in force, or an error (the socket stays, its filter unchanged).
 */
export function applyFilter (st: SocketState, f: FilterFields, streamExists: (id: string) => boolean): Record<string, unknown> {
  const { types, environment, stream } = f
  if (types !== undefined || (environment === undefined && stream === undefined)) {
    const known = (t: unknown): boolean => typeof t === 'string' && TYPE_NAMES.has(t)
    if (!Array.isArray(types) || types.length === 0 || types.length > TYPE_NAMES.size || !types.every(known)) {
      const message = `types must be a non-empty array of: ${[...TYPE_NAMES].join(', ')}`
      return { type: 'error', code: 'validation_error', field: 'types', message }
    }
  }
  if (environment !== undefined && !isEnvironment(environment)) {
    return { type: 'error', code: 'validation_error', field: 'environment', message: ENVIRONMENT_MESSAGE }
  }
  if (stream !== undefined && stream !== null) {
    if (!isStreamId(stream)) return { type: 'error', code: 'validation_error', field: 'stream', message: STREAM_ID_MESSAGE }
    if (!streamExists(stream)) {
      return { type: 'error', code: 'stream_not_found', field: 'stream', message: notOrgStreamMessage(stream) }
    }
  }
  if (Array.isArray(types)) st.types = new Set(types.map((t: string) => t === 'inbound' ? 'inbound.received' : t))
  if (environment !== undefined) st.environment = environment
  if (stream === null) st.stream = undefined
  else if (stream !== undefined) st.stream = stream as string
  const answer: Record<string, unknown> = { type: 'filter', types: [...(st.types ?? EVENT_TYPES)], environment: st.environment }
  if (st.stream !== undefined) answer.stream = st.stream
  return answer
}
