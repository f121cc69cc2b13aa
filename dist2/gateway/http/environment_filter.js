import { Type } from 'typebox';
/**
 * `?environment=live|test` on the read endpoints (messages, events, stats, suppressions). Default `live`: traffic
 * sent with a sandbox (`ob_test_`) key appears only when `test` is asked for. The route's query schema rejects
 * any other value with a `validation_error` naming `environment`.
 */
export const EnvironmentQuery = {
    environment: Type.Optional(Type.Union([Type.Literal('live'), Type.Literal('test')], {
        description: '`live` (default) or `test`: sandbox traffic (sent with an `ob_test_` key) is shown only with `test`'
    }))
};
export function environmentFilter(query) {
    return query.get('environment') === 'test' ? 'test' : 'live';
}
//# sourceMappingURL=environment_filter.js.map