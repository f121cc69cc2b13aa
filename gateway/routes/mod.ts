import type { RouteDef } from '../http/route.ts'
import { healthRoutes } from './health_v1.ts'
import { messageReadRoutes } from './messages_read_v1.ts'
import { eventRoutes } from './events_v1.ts'
import { statsRoutes } from './stats_v1.ts'

/** Every endpoint the gateway serves; the OpenAPI document is generated from this same list. */
export const ROUTES: readonly RouteDef[] = [
  ...healthRoutes,
  ...messageReadRoutes,
  ...eventRoutes,
  ...statsRoutes
]
