import type { RouteDef } from '../http/route.ts'
import { healthRoutes } from './health_v1.ts'
import { trackingRoutes } from './tracking.ts'
import { analyzeRoutes } from './analyze_v1.ts'

/** Every endpoint the gateway serves; the OpenAPI document is generated from this same list. */
export const ROUTES: readonly RouteDef[] = [
  ...healthRoutes,
  ...trackingRoutes,
  ...analyzeRoutes
]
