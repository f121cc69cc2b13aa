import { Type } from 'typebox';
import { route } from '../http/route.js';
import { planLimit } from '../server.js';
const Whoami = Type.Object({
    key_id: Type.String({ description: 'Id of the API key that made the request' }),
    key_name: Type.String(),
    permissions: Type.Array(Type.String()),
    environment: Type.Union([Type.Literal('live'), Type.Literal('test')]),
    organization_id: Type.String(),
    domain_id: Type.String(),
    domain: Type.String({ description: 'The domain the key sends from' }),
    plan: Type.String(),
    rate_limit_per_minute: Type.Integer({ description: 'Requests per minute this key may make' })
});
/** Which key, organisation, domain and rate limit a key value stands for: a cheap authenticated check for clients. */
export const whoamiRoutes = [
    route({
        method: 'get',
        path: '/v1/whoami',
        permission: 'read',
        summary: 'Describe the calling API key',
        description: 'Returns the key, its organisation, its domain and its rate limit. Useful to check a key after creating or rotating it.',
        tag: 'API keys',
        responses: { 200: { description: 'The calling key', schema: Whoami } },
        handler: ({ auth, deps }) => ({
            status: 200,
            body: {
                key_id: auth.key.id,
                key_name: auth.key.name,
                permissions: auth.key.permissions,
                environment: auth.key.environment,
                organization_id: auth.org.id,
                domain_id: auth.domain.id,
                domain: auth.domain.name,
                plan: auth.org.plan,
                rate_limit_per_minute: planLimit(auth.org, deps.config.plans.enterpriseRateLimit)
            }
        })
    })
];
//# sourceMappingURL=whoami_v1.js.map