import { Type } from 'typebox'
import { STREAM_NAME_PATTERN } from '../../protocol/mod.ts'
import { operatorRoute, route } from '../http/route.ts'
import { errorResponses, operatorErrorResponses, FORBIDDEN_PERMISSION } from '../schemas/control.ts'
import { requireOrg } from '../control/org_admin.ts'
import { reputationView, resumeStream } from '../control/stream_resume.ts'

const TAG = 'Reputation'
const Rate = Type.Number({ minimum: 0, maximum: 1, description: 'a fraction: 0.003 is 0.3 %' })
const Counts = Type.Object({
  delivered: Type.Integer({ minimum: 0 }), hard_bounced: Type.Integer({ minimum: 0 }), complained: Type.Integer({ minimum: 0 })
})
const Rates = Type.Object({
  volume: Type.Integer({ minimum: 0, description: 'delivered + hard_bounced' }), bounce_rate: Rate, complaint_rate: Rate
})
const Reason = Type.Union([Type.Literal('complaint_rate'), Type.Literal('bounce_rate')])
const Reputation = Type.Object({
  guard: Type.Union([Type.Literal('on'), Type.Literal('off')], { description: '`off`: rates are counted, no stream is paused' }),
  window_hours: Type.Integer({ minimum: 1 }),
  thresholds: Type.Object({ complaint_rate: Rate, bounce_rate: Rate, min_volume: Type.Integer({ minimum: 1 }) }),
  streams: Type.Array(Type.Object({
    stream: Type.String(),
    status: Type.Union([Type.Literal('active'), Type.Literal('paused')]),
    counts: Counts,
    rates: Rates,
    paused: Type.Optional(Type.Object({ reason: Reason, paused_at: Type.String({ format: 'date-time' }), counts: Counts, rates: Rates }))
  }))
})
const Resumed = Type.Object({
  stream: Type.String(),
  status: Type.Literal('active'),
  resumed_at: Type.String({ format: 'date-time' }),
  paused_at: Type.String({ format: 'date-time' })
})
const STREAM = { stream: STREAM_NAME_PATTERN }
const RESUME_DESCRIPTION = 'Sends on the stream are taken again at once by the gateway that answers, and by every other within 5 s. ' +
  'The stream\'s window is emptied, so it pauses ' +
  'again only once it has reached the minimum volume anew. The organisation\'s webhooks get a `stream.resumed` event.'

export const reputationRoutes = [
  route({
    method: 'get',
    path: '/v1/reputation',
    permission: 'read',
    summary: 'Hard-bounce and complaint rates per stream over the rolling window, the thresholds, and which streams are paused',
    description: 'Live traffic only: sandbox messages never count. See docs/reputation.md for the arithmetic.',
    tag: TAG,
    responses: {
      200: { description: 'The organisation\'s reputation', schema: Reputation }, ...errorResponses({ forbidden: FORBIDDEN_PERMISSION })
    },
    handler: async ({ deps, auth }) => ({ status: 200, body: await reputationView(deps, auth.org.id) })
  }),
  route({
    method: 'post',
    path: '/v1/reputation/streams/:stream/resume',
    paramPatterns: STREAM,
    audit: { action: 'stream.resumed', target: ({ params }) => params.stream },
    permission: 'manage',
    summary: 'Resume sending on a stream the reputation guard paused',
    description: RESUME_DESCRIPTION,
    tag: TAG,
    responses: {
      200: { description: 'The stream, active again', schema: Resumed },
      ...errorResponses({ forbidden: FORBIDDEN_PERMISSION, not_found: 'The stream is not paused' })
    },
    handler: async ({ deps, auth, params }) => ({ status: 200, body: await resumeStream(deps, auth.org.id, params.stream!, 'admin') })
  }),
  operatorRoute({
    method: 'post',
    path: '/v1/operator/organizations/:id/streams/:stream/resume',
    idPrefix: 'org',
    paramPatterns: STREAM,
    audit: { action: 'stream.resumed', target: ({ params }) => params.stream },
    permission: 'operator',
    summary: 'Resume sending on a stream of an organisation that the reputation guard paused',
    description: RESUME_DESCRIPTION,
    tag: 'Operator',
    responses: {
      200: { description: 'The stream, active again', schema: Resumed },
      ...operatorErrorResponses({ not_found: 'No organisation with this id, or the stream is not paused' })
    },
    handler: async (ctx) => {
      requireOrg(ctx.deps.cp, ctx.params.id!)
      return { status: 200, body: await resumeStream(ctx.deps, ctx.params.id!, ctx.params.stream!, 'operator') }
    }
  })
]
