import { Type } from 'typebox'
import { route } from '../http/route.ts'
import { jetStreamStoreFull } from '../store_room.ts'

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
    summary: 'Readiness: NATS and Redis answer, and the message store has room',
    tag: 'Operations',
    responses: {
      200: { description: 'NATS and Redis answer, and the message store has room', schema: Status },
      503: { description: '`unavailable`: NATS or Redis does not answer; `queue_full`: the JetStream store of queued mail is full', schema: Status }
    },
    handler: async ({ deps }) => {
      const deadline = new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('timeout')), 1000).unref())
      try {
        await Promise.race([Promise.all([deps.nc.rtt(), deps.redis.ping()]), deadline])
        // Sends are refused with 503 `queue_full` until delivery frees room: take the process out of rotation.
        if (await Promise.race([jetStreamStoreFull(deps.nc), deadline])) return { status: 503, body: { status: 'queue_full' } }
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
    tag: 'Operations',
    responses: { 200: { description: 'Prometheus text exposition format' } },
    handler: async ({ deps }) => ({ status: 200, raw: { contentType: deps.metrics.contentType, data: await deps.metrics.render() } })
  })
]
