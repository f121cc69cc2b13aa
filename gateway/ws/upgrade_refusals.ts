import type uWS from 'uWebSockets.js'
import { ApiError, newId } from '../../protocol/mod.ts'

/** Which traffic a socket of the live feed forwards: live, or sandbox (`ob_test_` keys). */
export type Environment = 'live' | 'test'

export function isEnvironment (v: unknown): v is Environment {
  return v === 'live' || v === 'test'
}
export const ENVIRONMENT_MESSAGE = 'environment must be "live" or "test"'

/** The answer to an upgrade asking for an environment that is neither `live` nor `test`. */
export function refuseEnvironment (res: uWS.HttpResponse): void {
  const err = ApiError.validation([{ field: 'environment', message: ENVIRONMENT_MESSAGE }])
  res.cork(() => {
    res.writeStatus('400 Bad Request').writeHeader('Content-Type', 'application/json').end(JSON.stringify(err.toJSON(newId('req'))))
  })
}

/** The answer to an upgrade from an address at its cap: the API's error format, so clients parse one shape. */
export function refuseUpgrade (res: uWS.HttpResponse, max: number): void {
  const err = new ApiError(
    'rate_limited', `Too many event stream connections from this address (at most ${max} at once); close one first.`, { retryAfter: 60 }
  )
  res.cork(() => {
    res.writeStatus('429 Too Many Requests')
      .writeHeader('Content-Type', 'application/json')
      .writeHeader('Retry-After', String(err.retryAfter))
      .end(JSON.stringify(err.toJSON(newId('req'))))
  })
}
