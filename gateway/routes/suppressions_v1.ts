import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { route } from '../http/route.ts'
import { PageQuery, pageSchema } from '../http/pagination.ts'
import { EMAIL_PATTERN, isEmail, pageSuppressions, suppress, suppressionView, unsuppress } from '../control/suppressions.ts'
import { SuppressionView, errorResponses } from '../schemas/control.ts'
import { EnvironmentQuery, environmentFilter } from '../http/environment_filter.ts'

const Email = Type.String({ minLength: 3, maxLength: 254, pattern: EMAIL_PATTERN })
const ListQuery = Type.Object({
  ...PageQuery.properties,
  email: Type.Optional(Type.String({ maxLength: 254, description: 'Only this address (case-insensitive)' })),
  ...EnvironmentQuery
})
const AddBody = Type.Object({ email: Email }, { additionalProperties: false })

const TAG = 'Suppressions'

export const suppressionRoutes = [
  route({
    method: 'get',
    path: '/v1/suppressions',
    permission: 'read',
    summary: 'List suppressed addresses (hard bounces, complaints, unsubscribes, manual), in address order',
    description: 'The suppression list is live state: sandbox (`ob_test_`) outcomes never add to it, so `environment=test` lists ' +
      'nothing; `live` is the default.',
    tag: TAG,
    query: ListQuery,
    responses: {
      200: { description: 'A page of suppressions', schema: pageSchema(SuppressionView) },
      ...errorResponses({ validation_error: 'Bad limit or cursor', forbidden: 'The key lacks read' })
    },
    handler: ({ deps, auth, query }) => {
      if (environmentFilter(query) === 'test') return { status: 200, body: { data: [], has_more: false, next_cursor: null } }
      const page = pageSuppressions(deps.cp, auth.org.id, query, deps.config.api.listMaxBytes)
      return { status: 200, body: { ...page, data: page.data.map(suppressionView) } }
    }
  }),
  route<{ email: string }>({
    method: 'post',
    path: '/v1/suppressions',
    permission: 'manage',
    summary: 'Suppress an address by hand (reason manual); sends to it are then skipped',
    tag: TAG,
    body: AddBody,
    responses: {
      201: { description: 'Suppressed', schema: SuppressionView },
      200: { description: 'The address was already suppressed; its existing entry', schema: SuppressionView },
      ...errorResponses({ validation_error: 'email missing or not an address', forbidden: 'The key lacks manage' })
    },
    handler: async ({ deps, auth, body }) => {
      const { record, created } = await suppress(deps.cp, auth.org.id, body.email)
      if (created) deps.metrics.suppressionsAdded.manual.inc()
      return { status: created ? 201 : 200, body: suppressionView(record) }
    }
  }),
  route({
    method: 'del',
    path: '/v1/suppressions/:email',
    permission: 'manage',
    summary: 'Remove an address from the suppression list so it can be sent to again',
    tag: TAG,
    responses: {
      204: { description: 'Removed' },
      ...errorResponses({ forbidden: 'The key lacks manage', not_found: 'The address is not suppressed (or is not an address)' })
    },
    handler: async ({ deps, auth, params }) => {
      const email = params.email!.trim()
      if (!isEmail(email)) throw new ApiError('not_found', `${email} is not on the suppression list.`)
      await unsuppress(deps.cp, auth.org.id, email)
      return { status: 204 }
    }
  })
]
