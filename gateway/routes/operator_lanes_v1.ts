import { Type } from 'typebox'
import { ApiError } from '../../protocol/mod.ts'
import { operatorRoute } from '../http/route.ts'
import { operatorErrorResponses } from '../schemas/control.ts'
import { LaneView } from '../schemas/egress.ts'
import { EgressState, laneViews } from '../../stores/egress/mod.ts'

/**
 * One reader of the egress state per Redis client (it defines its scripts on the client once), recovering lanes with
 * the engines' period. It claims no recovery step: those are the engines' to log and count.
 */
const states = new WeakMap<object, EgressState>()
function stateOf (redis: ConstructorParameters<typeof EgressState>[0], recoverEveryMs: number): EgressState {
  let s = states.get(redis)
  if (s === undefined) states.set(redis, s = new EgressState(redis, Date.now, { recoverEveryMs }))
  return s
}

/**
 * What operators see of egress as it runs: every lane (a source toward a provider) the cluster has used, with its
 * limits, connections open, rate now, throttle and recovery, the mail waiting for it and a warming source's progress.
 */
export const operatorLaneRoutes = [
  operatorRoute({
    method: 'get',
    path: '/v1/operator/egress/lanes',
    permission: 'operator',
    summary: 'Egress lanes as they run: limits, connections, throttle, waiting mail and warm-up, per source and provider',
    description: 'Read from the state every engine shares in Redis; with Redis unreachable it is 503 `service_unavailable` ' +
      '(delivery goes on unshaped meanwhile, see the egress guide).',
    tag: 'Operator',
    responses: {
      200: {
        description: 'Every lane used in the last 7 days, by source then provider', schema: Type.Object({ data: Type.Array(LaneView) })
      },
      ...operatorErrorResponses({ service_unavailable: 'Redis cannot be read now' })
    },
    handler: async ({ deps }) => {
      let data
      try {
        const state = stateOf(deps.redis, deps.config.smtp.egressRecoverEveryMs)
        data = await laneViews(state, (name) => deps.cp.egress.source(name), deps.cp.egress.settings())
      } catch {
        throw new ApiError('service_unavailable', 'The egress state in Redis cannot be read now; delivery goes on meanwhile.')
      }
      return { status: 200, body: { data } }
    }
  })
]
