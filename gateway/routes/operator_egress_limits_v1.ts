import { ApiError, EGRESS_NAME_PATTERN, type LimitOverride } from '../../protocol/mod.ts'
import { operatorRoute } from '../http/route.ts'
import { operatorErrorResponses } from '../schemas/control.ts'
import { LimitsBody, SourceLimitsView } from '../schemas/egress.ts'

/**
 * The operator's limit overrides: the installation's per provider (over the built-in shaping), and one source's own
 * per provider (over the installation's). Written through `cp.egress` (stores/control_plane/egress_config.ts), as by
 * the CLI's `outbox egress limits`.
 */

const TAG = 'Operator'
const NAME = { name: EGRESS_NAME_PATTERN }
const NO_SOURCE = 'No source with this name (or a name of another shape)'

export const operatorEgressLimitRoutes = [
  operatorRoute({
    method: 'get',
    path: '/v1/operator/egress/limits',
    permission: 'operator',
    summary: 'The limit overrides per provider (what replaces the built-in shaping)',
    tag: TAG,
    responses: { 200: { description: 'The overrides', schema: LimitsBody }, ...operatorErrorResponses({}) },
    handler: ({ deps }) => ({ status: 200, body: { limits: deps.cp.egress.settings().limits ?? {} } })
  }),
  operatorRoute<{ limits: Record<string, LimitOverride> }>({
    method: 'put',
    path: '/v1/operator/egress/limits',
    audit: { action: 'egress.limits_set', fields: ['limits'] },
    permission: 'operator',
    summary: 'Replace the limit overrides (idempotent; `{}` removes them all)',
    tag: TAG,
    body: LimitsBody,
    responses: {
      200: { description: 'The overrides', schema: LimitsBody },
      ...operatorErrorResponses({
        validation_error: 'Unknown provider key shape or field, a number outside its bounds, tls not opportunistic|required'
      })
    },
    handler: async (ctx) => {
      const settings = await ctx.deps.cp.egress.putLimits(ctx.body.limits)
      return { status: 200, body: { limits: settings.limits ?? {} } }
    }
  }),
  operatorRoute({
    method: 'get',
    path: '/v1/operator/egress/sources/:name/limits',
    paramPatterns: NAME,
    permission: 'operator',
    summary: 'One source\'s own limit overrides per provider (over the installation\'s)',
    tag: TAG,
    responses: { 200: { description: 'The overrides', schema: SourceLimitsView }, ...operatorErrorResponses({ not_found: NO_SOURCE }) },
    handler: ({ deps, params }) => {
      const s = deps.cp.egress.source(params.name!)
      if (s === undefined) throw new ApiError('not_found', `No source named ${params.name!}.`)
      return { status: 200, body: { source: s.name, limits: s.limits ?? {} } }
    }
  }),
  operatorRoute<{ limits: Record<string, LimitOverride> }>({
    method: 'put',
    path: '/v1/operator/egress/sources/:name/limits',
    audit: { action: 'egress.source_limits_set', fields: ['limits'] },
    paramPatterns: NAME,
    permission: 'operator',
    summary: 'Replace one source\'s own limit overrides (idempotent; `{}` removes them)',
    description: 'Limits for the lanes of this source only (this source toward each provider), over the installation\'s ' +
      'overrides: `PUT /v1/operator/egress/limits` sets those for every source. Applies from the next attempt.',
    tag: TAG,
    body: LimitsBody,
    responses: {
      200: { description: 'The source\'s overrides', schema: SourceLimitsView },
      ...operatorErrorResponses({
        validation_error: 'Unknown provider key shape or field, a number outside its bounds, tls not opportunistic|required',
        not_found: NO_SOURCE
      })
    },
    handler: async (ctx) => {
      const source = await ctx.deps.cp.egress.putSourceLimits(ctx.params.name!, ctx.body.limits)
      return { status: 200, body: { source: source.name, limits: source.limits ?? {} } }
    }
  })
]
