import type { RouteDef } from '../http/route.ts'
import { healthRoutes } from './health_v1.ts'
import { messageSendRoutes } from './messages_v1.ts'

/** Every endpoint the gateway serves; the OpenAPI document is generated from this same list. */
export const ROUTES: readonly RouteDef[] = [
  ...healthRoutes,
  ...messageSendRoutes
]
