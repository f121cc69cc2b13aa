import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { metricsAuthorized } from '../../stores/metrics/mod.ts'
import { route } from '../http/route.ts'
import { natsCheck, redisCheck } from '../health/dependency_checks.ts'

const Status = Type.Object({ status: Type.String() })

/** One entry per dependency: `ok`, or what is wrong with it. */
const Checks = Type.Object({
  nats: Type.String({ description: '`ok`, or `unavailable` when NATS does not answer within 1 s' }),
  redis: Type.String({ description: '`ok`; `full` when Redis answers but refuses writes at `maxmemory`; `unavailable` when it does not answer within 1 s' })
})
const Readiness = Type.Object({
  status: Type.String({ description: '`ok` when every check is `ok`, else `unavailable`' }),
  checks: Checks
})

export const healthRoutes = [
  route({
    method: 'get',
    path: '/healthz',
    permission: null,
    summary: 'Liveness: the process is up',
    tag: 'Operations',
    responses: { 200: { description: 'Always, while the process runs', schema: Status } },
    handler: () => ({ status: 200, body: { status: 'ok' } })
  }),
  route({
    method: 'get',
    path: '/readyz',
    permission: null,
    summary: 'Readiness: NATS answers and Redis takes writes',
    tag: 'Operations',
    responses: {
      200: { description: 'Every dependency is well', schema: Readiness },
      503: { description: 'A dependency is unwell; `checks` says which and how', schema: Readiness }
    },
    handler: async ({ deps }) => {
      const [nats, redis] = await Promise.all([natsCheck(deps.nc), redisCheck(deps.redis)])
      // One entry per check, each its own function; ready when every one says ok.
      const checks: Record<string, string> = { nats, redis }
      const ready = Object.values(checks).every((v) => v === 'ok')
      return { status: ready ? 200 : 503, body: { status: ready ? 'ok' : 'unavailable', checks } }
    }
  }),
  route({
    method: 'get',
    path: '/metrics',
    permission: null,
    summary: 'Prometheus metrics',
    description: 'Open to anyone unless OB_METRICS_TOKEN is set; then only with `Authorization: Bearer <OB_METRICS_TOKEN>`.',
    tag: 'Operations',
    responses: {
      200: { description: 'Prometheus text exposition format' },
      401: { description: 'unauthorized: OB_METRICS_TOKEN is set and the request does not carry it as a bearer token' }
    },
    handler: async ({ deps, headers }) => {
      if (!metricsAuthorized(headers.authorization, deps.config.metrics.token)) {
        throw new ApiError('unauthorized', 'GET /metrics needs Authorization: Bearer <OB_METRICS_TOKEN> on this installation.')
      }
      return { status: 200, raw: { contentType: deps.metrics.contentType, data: await deps.metrics.render() } }
    }
  })
]
