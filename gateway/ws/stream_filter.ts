import { EVENT_TYPES } from '../../protocol/mod.ts'
import type { SocketState } from './stream_socket.ts'
import { ENVIRONMENT_MESSAGE, isEnvironment } from './upgrade_refusals.ts'

const TYPE_NAMES = new Set<string>([...EVENT_TYPES, 'inbound'])

/**
 * A `filter` message on the live feed: `types` and `environment` each replace what the socket had when given; one of
 * them must be. Answers the message to send back: the filter now in force, or an error (the socket stays, its filter
 * unchanged).
 */
export function applyFilter (st: SocketState, types: unknown, environment: unknown): Record<string, unknown> {
  if (types !== undefined || environment === undefined) {
    const known = (t: unknown): boolean => typeof t === 'string' && TYPE_NAMES.has(t)
    if (!Array.isArray(types) || types.length === 0 || types.length > TYPE_NAMES.size || !types.every(known)) {
      const message = `types must be a non-empty array of: ${[...TYPE_NAMES].join(', ')}`
      return { type: 'error', code: 'validation_error', field: 'types', message }
    }
  }
  if (environment !== undefined && !isEnvironment(environment)) {
    return { type: 'error', code: 'validation_error', field: 'environment', message: ENVIRONMENT_MESSAGE }
  }
  if (Array.isArray(types)) st.types = new Set(types.map((t: string) => t === 'inbound' ? 'inbound.received' : t))
  if (environment !== undefined) st.environment = environment
  return { type: 'filter', types: [...(st.types ?? EVENT_TYPES)], environment: st.environment }
}
