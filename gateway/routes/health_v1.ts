import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { metricsAuthorized } from '../../stores/metrics/mod.ts'
import { route } from '../http/route.ts'

const Status = Type.Object({ status: Type.String() })

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
    summary: 'Readiness: NATS and Redis answer',
    tag: 'Operations',
    responses: { 200: { description: 'NATS and Redis answer', schema: Status }, 503: { description: 'NATS or Redis does not answer', schema: Status } },
    handler: async ({ deps }) => {
      const deadline = new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('timeout')), 1000).unref())
      try {
        await Promise.race([Promise.all([deps.nc.rtt(), deps.redis.ping()]), deadline])
        return { status: 200, body: { status: 'ok' } }
      } catch {
        return { status: 503, body: { status: 'unavailable' } }
      }
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
