import { Type } from 'typebox'
import type { Environment } from '../../stores/read_model/mod.ts'

/**
 * `?environment=live|test` on the read endpoints (messages, events, stats, suppressions). Default `live`: traffic
 * sent with a sandbox (`ob_test_`) key appears only when `test` is asked for. The route's query schema rejects
 * any other value with a `validation_error` naming `environment`.
 */
export const EnvironmentQuery = {
  environment: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')], {
    description: '`live` (default) or `test`: sandbox traffic (sent with an `ob_test_` key) is shown only with `test`'
  }))
}

export function environmentFilter (query: URLSearchParams): Environment {
  return query.get('environment') === 'test' ? 'test' : 'live'
}
