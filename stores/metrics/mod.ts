export { OutboxMetrics } from './outbox_metrics.ts'
export { startMetricsServer, type MetricsServer } from './metrics_server.ts'
export { metricsAuthorized } from './metrics_token.ts'
export { ConsumerPoller, CONSUMER_POLL_MS } from './consumer_poller.ts'
export {
  DESTINATION_CLASSES, SMTP_RESULTS, ENVIRONMENTS, DELIVERY_OUTCOMES, BOUNCE_TYPES, BOUNCE_CATEGORY_LABELS, SUPPRESSION_REASONS,
  REPORT_DROP_REASONS, INBOUND_QUOTAS, RATE_SCOPES, WEBHOOK_RESULTS, WEBHOOK_JOB_DROP_REASONS, webhookResult,
  destinationClass, TLS_REPORT_TRANSPORTS, TLS_REPORT_RESULTS, type TlsReportTransport, type TlsReportResult,
  type DestinationClass, type SmtpResult, type Environment, type DeliveryOutcome, type BounceType, type BounceCategoryLabel,
  type SuppressionReason, type ReportDropReason, type InboundQuota, type RateScope, type WebhookResult,
  type WebhookJobDropReason
} from './label_sets.ts'
