import { healthRoutes } from './health_v1.js';
import { apiKeyRoutes } from './api_keys_v1.js';
import { domainRoutes } from './domains_v1.js';
import { webhookRoutes } from './webhooks_v1.js';
import { templateRoutes } from './templates_v1.js';
import { billingRoutes } from './billing_v1.js';
import { suppressionRoutes } from './suppressions_v1.js';
import { inboundRouteRoutes } from './inbound_routes_v1.js';
import { inboundRawRoutes } from './inbound_raw_v1.js';
import { whoamiRoutes } from './whoami_v1.js';
import { messageReadRoutes } from './messages_read_v1.js';
import { messageContentRoutes } from './message_content_v1.js';
import { eventRoutes } from './events_v1.js';
import { statsRoutes } from './stats_v1.js';
import { webhookDeliveryRoutes } from './webhook_deliveries_v1.js';
import { webhookRecoveryRoutes } from './webhook_recovery_v1.js';
import { messageSendRoutes } from './messages_v1.js';
import { messageScheduleRoutes } from './messages_schedule_v1.js';
import { trackingRoutes } from './tracking.js';
import { analyzeRoutes } from './analyze_v1.js';
/** Every endpoint the gateway serves; the OpenAPI document is generated from this same list. */
export const ROUTES = [
    ...healthRoutes,
    ...apiKeyRoutes,
    ...domainRoutes,
    ...webhookRoutes,
    ...templateRoutes,
    ...billingRoutes,
    ...suppressionRoutes,
    ...inboundRouteRoutes,
    ...inboundRawRoutes,
    ...whoamiRoutes,
    ...messageReadRoutes,
    ...messageContentRoutes,
    ...eventRoutes,
    ...statsRoutes,
    ...webhookDeliveryRoutes,
    ...webhookRecoveryRoutes,
    ...messageSendRoutes,
    ...messageScheduleRoutes,
    ...trackingRoutes,
    ...analyzeRoutes
];
//# sourceMappingURL=mod.js.map