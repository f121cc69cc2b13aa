import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { metricsAuthorized } from '../../stores/metrics/mod.ts'
import { route } from '../http/route.ts'
import { natsCheck, queueCheck, redisCheck } from '../health/dependency_checks.ts'

const Status = Type.Object({ status: Type.String() })

/** One entry per dependency: `ok`, or what is wrong with it. */
const Checks = Type.Object({
  nats: Type.String({ description: '`ok`, or `unavailable` when NATS does not answer within 1 s' }),
  redis: Type.String({
    description: '`ok`; `full` when Redis answers but refuses writes at `maxmemory`; `unavailable` when it does not answer within 1 s'
  }),
  queue: Type.String({
    description: '`ok`; `full` while the outbound queue or the store of large messages\' content has no room for one more ' +
      'message below its share of OB_NATS_STORE_MB (sends answer 503 `queue_full`); `unavailable` when it cannot be read within 1 s'
  })
})
const Readiness = Type.Object({
  status: Type.String({ description: '`ok` when every check is `ok`; `queue_full` when only the queue is full; else `unavailable`' }),
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
    summary: 'Readiness: NATS answers, Redis takes writes, and the queue has room',
    tag: 'Operations',
    responses: {
      200: { description: 'Every dependency is well', schema: Readiness },
      503: {
        description: '`queue_full`: the JetStream store of queued mail is full (sends are refused until delivery frees room); ' +
          '`unavailable`: a dependency is unwell. `checks` says which and how',
        schema: Readiness
      }
    },
    handler: async ({ deps }) => {
      const [nats, redis, queue] = await Promise.all([natsCheck(deps.nc), redisCheck(deps.redis), queueCheck(deps.nc)])
      // One entry per check, each its own function; ready when every one says ok.
      const checks: Record<string, string> = { nats, redis, queue }
      const ready = Object.values(checks).every((v) => v === 'ok')
      const status = ready ? 'ok' : nats === 'ok' && redis === 'ok' && queue === 'full' ? 'queue_full' : 'unavailable'
      return { status: ready ? 200 : 503, body: { status, checks } }
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
