import { Type } from 'typebox'
import { route } from '../http/route.ts'
import { ownedRecord } from '../http/access.ts'
import { PageQuery, pageById, pageSchema } from '../http/pagination.ts'
import { ROUTE_MATCH_PATTERN, addRoute, removeRoute, routeView } from '../control/inbound_routes.ts'
import { FORBIDDEN_OTHER_ORG, RouteAction, RouteView, errorResponses } from '../schemas/control.ts'

const CreateRouteBody = Type.Object({
  match: Type.String({
    minLength: 3,
    maxLength: 254,
    pattern: ROUTE_MATCH_PATTERN,
    description: '"addr@domain" or "*@domain" (any address of the domain); compared case-insensitively. The domain must be registered ' +
      'to the organisation (POST /v1/domains), and be the key\'s own domain unless the key has admin'
  }),
  action: RouteAction
}, { additionalProperties: false })

interface CreateRoute { match: string, action: { type: 'webhook', include_attachments: boolean } }

const TAG = 'Inbound routes'
const NOT_FOUND = 'No inbound route with this id'

export const inboundRouteRoutes = [
  route<CreateRoute>({
    method: 'post',
    path: '/v1/inbound/routes',
    audit: { action: 'inbound_route.created', fields: ['match', 'action'] },
    permission: 'manage',
    summary: 'Route inbound mail for an address (or a whole domain) to the organisation\'s webhooks as inbound.received events',
    tag: TAG,
    body: CreateRouteBody,
    responses: {
      201: { description: 'The route', schema: RouteView },
      ...errorResponses({
        validation_error: 'match is not addr@domain or *@domain, or action is invalid',
        forbidden: 'The key lacks manage, or the domain of match is not one of the organisation\'s ' +
          '(a key without admin: not its own domain)',
        conflict: 'The organisation already has a route with this match'
      })
    },
    handler: async (ctx) => {
      const { deps, auth, body } = ctx
      const r = await addRoute(deps.cp, auth.key, body.match, body.action.include_attachments)
      return { status: 201, body: routeView(r) }
    }
  }),
  route({
    method: 'get',
    path: '/v1/inbound/routes',
    permission: 'manage',
    summary: 'List the organisation\'s inbound routes, oldest first',
    tag: TAG,
    query: PageQuery,
    responses: {
      200: { description: 'A page of routes', schema: pageSchema(RouteView) },
      ...errorResponses({ validation_error: 'Bad limit or cursor', forbidden: 'The key lacks manage' })
    },
    handler: ({ deps, auth, query }) => {
      return { status: 200, body: pageById(deps.cp.routes.list(`${auth.org.id}.`), query, deps.config.api.listMaxBytes, routeView) }
    }
  }),
  route({
    method: 'get',
    path: '/v1/inbound/routes/:id',
    idPrefix: 'rt',
    permission: 'manage',
    summary: 'Read one inbound route',
    tag: TAG,
    responses: {
      200: { description: 'The route', schema: RouteView },
      ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND })
    },
    handler: ({ deps, auth, params }) => ({
      status: 200, body: routeView(ownedRecord(deps.cp.routes, auth.org.id, params.id!, 'inbound route'))
    })
  }),
  route({
    method: 'del',
    path: '/v1/inbound/routes/:id',
    audit: { action: 'inbound_route.deleted' },
    idPrefix: 'rt',
    permission: 'manage',
    summary: 'Delete an inbound route; mail to its address is then refused',
    tag: TAG,
    responses: { 204: { description: 'Deleted' }, ...errorResponses({ forbidden: FORBIDDEN_OTHER_ORG, not_found: NOT_FOUND }) },
    handler: async (ctx) => {
      const { deps, auth, params } = ctx
      const r = ownedRecord(deps.cp.routes, auth.org.id, params.id!, 'inbound route')
      await removeRoute(deps.cp, r)
      return { status: 204 }
    }
  })
]
