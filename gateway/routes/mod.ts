import type { RouteDef } from '../http/route.ts'
import { healthRoutes } from './health_v1.ts'
import { apiKeyRoutes } from './api_keys_v1.ts'
import { domainRoutes } from './domains_v1.ts'
import { domainHealthRoutes } from './domain_health_v1.ts'
import { domainDmarcRoutes } from './domain_dmarc_v1.ts'
import { webhookRoutes } from './webhooks_v1.ts'
import { templateRoutes } from './templates_v1.ts'
import { streamRoutes } from './streams_v1.ts'
import { billingRoutes } from './billing_v1.ts'
import { suppressionRoutes } from './suppressions_v1.ts'
import { inboundRouteRoutes } from './inbound_routes_v1.ts'
import { inboundRawRoutes } from './inbound_raw_v1.ts'
import { whoamiRoutes } from './whoami_v1.ts'
import { messageReadRoutes } from './messages_read_v1.ts'
import { messageContentRoutes } from './message_content_v1.ts'
import { eventRoutes } from './events_v1.ts'
import { statsRoutes } from './stats_v1.ts'
import { reputationRoutes } from './reputation_v1.ts'
import { webhookDeliveryRoutes } from './webhook_deliveries_v1.ts'
import { webhookRecoveryRoutes } from './webhook_recovery_v1.ts'
import { messageSendRoutes } from './messages_v1.ts'
import { messageScheduleRoutes } from './messages_schedule_v1.ts'
import { trackingRoutes } from './tracking.ts'
import { analyzeRoutes } from './analyze_v1.ts'
import { operatorEgressRoutes } from './operator_egress_v1.ts'
import { operatorEgressLimitRoutes } from './operator_egress_limits_v1.ts'
import { operatorLaneRoutes } from './operator_lanes_v1.ts'
import { operatorOrganizationRoutes } from './operator_orgs_v1.ts'
import { operatorQueueRoutes } from './operator_queues_v1.ts'
import { auditLogRoutes } from './audit_log_v1.ts'
import { privacyRoutes } from './privacy_v1.ts'

/** Every endpoint the gateway serves; the OpenAPI document is generated from this same list. */
export const ROUTES: readonly RouteDef[] = [
  ...healthRoutes,
  ...apiKeyRoutes,
  ...domainRoutes,
  ...domainHealthRoutes,
  ...domainDmarcRoutes,
  ...webhookRoutes,
  ...templateRoutes,
  ...streamRoutes,
  ...billingRoutes,
  ...suppressionRoutes,
  ...inboundRouteRoutes,
  ...inboundRawRoutes,
  ...whoamiRoutes,
  ...messageReadRoutes,
  ...messageContentRoutes,
  ...eventRoutes,
  ...statsRoutes,
  ...reputationRoutes,
  ...webhookDeliveryRoutes,
  ...webhookRecoveryRoutes,
  ...messageSendRoutes,
  ...messageScheduleRoutes,
  ...trackingRoutes,
  ...analyzeRoutes,
  ...operatorEgressRoutes,
  ...operatorEgressLimitRoutes,
  ...operatorLaneRoutes,
  ...operatorOrganizationRoutes,
  ...operatorQueueRoutes,
  ...auditLogRoutes,
  ...privacyRoutes
]
