export { OutboxMetrics } from './outbox_metrics.js';
export { startMetricsServer } from './metrics_server.js';
export { metricsAuthorized } from './metrics_token.js';
export { ConsumerPoller, CONSUMER_POLL_MS } from './consumer_poller.js';
export { DESTINATION_CLASSES, SMTP_RESULTS, ENVIRONMENTS, DELIVERY_OUTCOMES, BOUNCE_TYPES, BOUNCE_CATEGORY_LABELS, SUPPRESSION_REASONS, REPORT_DROP_REASONS, INBOUND_QUOTAS, RATE_SCOPES, WEBHOOK_RESULTS, webhookResult, destinationClass } from './label_sets.js';
//# sourceMappingURL=mod.js.map