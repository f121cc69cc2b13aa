/**
 * The closed label values of Outbox's metrics. Every label takes its values from one of these lists (or from a
 * table of the configuration: routes, shards, consumers), so a series count never grows with traffic: no
 * message ids, addresses or domain names ever become label values.
 */

/** Where an SMTP attempt went: the mailbox providers that publish sender rules, everyone else, or the smart host. */
export const DESTINATION_CLASSES = ['gmail', 'microsoft', 'yahoo', 'apple', 'other', 'relay'] as const
export type DestinationClass = typeof DESTINATION_CLASSES[number]

/** What one SMTP attempt of one recipient came to (a `throttled` recipient made no attempt). */
export const SMTP_RESULTS = ['delivered', 'bounced', 'deferred', 'failed'] as const
export type SmtpResult = typeof SMTP_RESULTS[number]

export const ENVIRONMENTS = ['live', 'test'] as const
export type Environment = typeof ENVIRONMENTS[number]

/** Outcomes of a recipient's delivery that the engine records: each final one once, `deferred` per attempt. */
export const DELIVERY_OUTCOMES = ['delivered', 'deferred', 'bounced', 'failed'] as const
export type DeliveryOutcome = typeof DELIVERY_OUTCOMES[number]

export const BOUNCE_TYPES = ['hard', 'soft'] as const
export type BounceType = typeof BOUNCE_TYPES[number]

/** The `bounce_category` values of `bounced` events (docs/delivery.md). */
export const BOUNCE_CATEGORY_LABELS = ['mailbox', 'domain', 'policy', 'content', 'size', 'mailbox_full', 'other', 'operator'] as const
export type BounceCategoryLabel = typeof BOUNCE_CATEGORY_LABELS[number]

export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'manual'] as const
export type SuppressionReason = typeof SUPPRESSION_REASONS[number]

/** Why a bounce, complaint or mailed unsubscribe was dropped (inbound/report_checks.ts). */
export const REPORT_DROP_REASONS = [
  'unknown_key', 'forged_tag', 'unknown_message', 'other_organisation', 'not_our_message', 'recipient_mismatch', 'unreadable'
] as const
export type ReportDropReason = typeof REPORT_DROP_REASONS[number]

/** What became of a DMARC aggregate report mailed to a domain's report address (inbound/dmarc_intake.ts). */
export const DMARC_REPORT_RESULTS = [
  'accepted', 'duplicate', 'other_organisation', 'rate_limited', 'too_large', 'too_many_records', 'malformed', 'busy'
] as const
export type DmarcReportResult = typeof DMARC_REPORT_RESULTS[number]

/** How a TLS report went to one `rua` of a domain (engine/tls/tls_reporter.ts): POSTed to `https:`, mailed to `mailto:`. */
export const TLS_REPORT_TRANSPORTS = ['https', 'mailto'] as const
export type TlsReportTransport = typeof TLS_REPORT_TRANSPORTS[number]
/**
 * What became of it: `sent` (2xx, or 250 to the mail), `failed` (tried again next run), `refused` (ended: a 5xx reply
 * to the mail, an address or domain that takes no mail), `not_configured` (a mailto: rua without OB_REPORT_FROM).
 */
export const TLS_REPORT_RESULTS = ['sent', 'failed', 'refused', 'not_configured'] as const
export type TlsReportResult = typeof TLS_REPORT_RESULTS[number]

/** Which inbound quota refused mail at SMTP time (inbound/quotas.ts): a route's or a sending address's. */
export const INBOUND_QUOTAS = ['route_messages', 'route_bytes', 'sender_messages', 'sender_bytes'] as const
export type InboundQuota = typeof INBOUND_QUOTAS[number]

/** Which limit a rate decision was for: a key's plan, failed authentications, tracking requests per address. */
export const RATE_SCOPES = ['api_key', 'auth_failure', 'tracking'] as const
export type RateScope = typeof RATE_SCOPES[number]

/** A webhook attempt's result: a 2xx, another status, no answer in time, no connection, or refused by Outbox. */
export const WEBHOOK_RESULTS = ['success', 'http_error', 'timeout', 'network', 'blocked'] as const
export type WebhookResult = typeof WEBHOOK_RESULTS[number]

/**
 * Why a webhook job ended without an attempt: its webhook was deleted; it is `failed`, or failed after the job's event
 * was fanned out (webhooks/job_eligibility.ts); or the event it names is no longer in OB_EVENTS (webhooks/job_intake.ts).
 */
export const WEBHOOK_JOB_DROP_REASONS = ['webhook_deleted', 'webhook_failed', 'event_missing'] as const
export type WebhookJobDropReason = typeof WEBHOOK_JOB_DROP_REASONS[number]

const BLOCKED = new Set(['ssrf_blocked', 'https_required', 'invalid_url'])

/** The result class of a webhook attempt's error code (webhooks/http_client.ts), null meaning success. */
export function webhookResult (error: string | null): WebhookResult {
  if (error === null) return 'success'
  if (error.startsWith('http_')) return 'http_error'
  if (error === 'timeout') return 'timeout'
  return BLOCKED.has(error) ? 'blocked' : 'network'
}

// Suffixes of the mail hosts of the large mailbox providers (MX host names, lower case, no trailing dot).
const PROVIDER_MX: ReadonlyArray<[string, DestinationClass]> = [
  ['.google.com', 'gmail'], ['.googlemail.com', 'gmail'],
  ['.outlook.com', 'microsoft'], ['.hotmail.com', 'microsoft'], ['.office365.us', 'microsoft'],
  ['.yahoodns.net', 'yahoo'], ['.yahoo.com', 'yahoo'], ['.aol.com', 'yahoo'],
  ['.icloud.com', 'apple'], ['.me.com', 'apple']
]

/**
 * The class of a mail host an attempt connected to, from its name: Google Workspace domains are `gmail` as
 * gmail.com is, since the same rules and the same servers apply. An address literal or any other host is `other`.
 */
export function destinationClass (mxHost: string): DestinationClass {
  const host = mxHost.toLowerCase().replace(/\.$/, '')
  for (const [suffix, cls] of PROVIDER_MX) if (host.endsWith(suffix) || host === suffix.slice(1)) return cls
  return 'other'
}
