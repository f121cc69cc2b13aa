import { Gauge, Registry, collectDefaultMetrics } from 'prom-client'
import { CounterFamily, HistogramFamily, type CounterChild, type HistogramChild } from './fast_series.ts'
import {
  BOUNCE_CATEGORY_LABELS, BOUNCE_TYPES, DMARC_REPORT_RESULTS, DELIVERY_OUTCOMES, DESTINATION_CLASSES, ENVIRONMENTS, INBOUND_QUOTAS,
  RATE_SCOPES, REPORT_DROP_REASONS, SMTP_RESULTS, SUPPRESSION_REASONS, TLS_REPORT_RESULTS, TLS_REPORT_TRANSPORTS,
  WEBHOOK_JOB_DROP_REASONS, WEBHOOK_RESULTS, type TlsReportResult, type TlsReportTransport, type BounceCategoryLabel, type BounceType,
  type DmarcReportResult, type DeliveryOutcome, type DestinationClass, type Environment,
  type RateScope, type InboundQuota, type ReportDropReason, type SmtpResult, type SuppressionReason, type WebhookJobDropReason,
  type WebhookResult
} from './label_sets.ts'

/** One child per label value, made once: the hot path increments it without building a label key. */
type Children<K extends string, C> = Record<K, C>

function childrenOf<K extends string, C> (values: readonly K[], make: (v: K) => C): Children<K, C> {
  return Object.fromEntries(values.map((v) => [v, make(v)])) as Children<K, C>
}

/** Seconds: an SMTP transaction takes from tens of milliseconds (a relay) to a minute (a slow greylisting host). */
const SMTP_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
/** Seconds: a webhook attempt is bounded by OB_WEBHOOK_TIMEOUT_MS (default 30 s). */
const WEBHOOK_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
/** Seconds from an event's storage to its fan-out; a backlog shows in the upper buckets. */
const FANOUT_BUCKETS_S = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120, 600]
/** Milliseconds (the gateway's histogram kept its unit when it moved to prom-client). */
const HTTP_BUCKETS_MS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500]

/**
 * Every metric of one Outbox process in one registry, whatever roles it runs: a process that runs the gateway
 * serves it at `GET /metrics` on the HTTP port, any other on OB_METRICS_PORT (metrics_server.ts). Created once
 * by the process start and handed to each part; a part that is not running leaves its series at zero.
 *
 * Families that are read rather than counted (gauges of in-flight work, consumer figures) take a reader from the
 * part that knows the value (`read`), asked at scrape time only.
 */
export class OutboxMetrics {
  readonly registry = new Registry()
  /** One route's series, found with one map look-up per request: no label key is built on the hot path. */
  private readonly routes = new Map<string, { byStatus: Map<number, CounterChild>, duration: HistogramChild }>()
  private readonly readers = new Map<string, Array<(set: (value: number, labels?: Record<string, string>) => void) => void>>()

  // gateway
  private readonly httpRequests = new CounterFamily('outbox_http_requests_total', 'HTTP requests by route and status.', this.registry)
  private readonly httpDuration = new HistogramFamily(
    'outbox_http_request_duration_ms', 'Time from request to response, in milliseconds.', this.registry, HTTP_BUCKETS_MS
  )

  readonly messagesQueued = new CounterFamily(
    'outbox_messages_queued_total', 'Messages accepted (202) and stored in JetStream by this gateway.', this.registry
  ).child()

  readonly smtpSubmissions = new CounterFamily(
    'outbox_smtp_submissions_total', 'Messages accepted by SMTP submission (250) and stored in JetStream by this gateway.', this.registry
  ).child()

  readonly rateDecisions: Children<RateScope, Children<'allowed' | 'limited', CounterChild>>
  readonly rateLocalDecisions = new CounterFamily(
    'outbox_rate_limit_local_decisions_total',
    'Rate-limit decisions made by this process\'s own buckets because Redis was full.',
    this.registry
  ).child()

  readonly auditUnrecorded = new CounterFamily(
    'outbox_audit_unrecorded_total',
    'Changes made and answered whose audit log entry JetStream did not store; each is on the log as audit.unrecorded.',
    this.registry
  ).child()

  // engine
  readonly deliveryOutcomes: Children<Environment, Children<DeliveryOutcome, CounterChild>>
  readonly bounces: Children<Environment, Children<BounceType, Children<BounceCategoryLabel, CounterChild>>>
  readonly complaints: Children<Environment, CounterChild>
  readonly smtpAttempts: Children<DestinationClass, Children<SmtpResult, HistogramChild>>
  readonly outboundUnreadable = new CounterFamily(
    'outbox_outbound_unreadable_total',
    'Queued messages this engine could not read that name nobody to tell (damaged), handed back for an hour.',
    this.registry
  ).child()

  readonly outboundNewerFormat = new CounterFamily(
    'outbox_outbound_newer_format_total',
    'Queued messages of a newer format than this engine reads, handed back for a newer engine (each hand-back once).',
    this.registry
  ).child()

  readonly destinationSuspensions = new CounterFamily(
    'outbox_destination_suspensions_total', 'Times a destination was suspended after answering only 4xx.', this.registry
  ).child()

  readonly egressLaneChanges: Children<'slow' | 'pause' | 'out', CounterChild>
  readonly egressLaneRecoveries: Children<'doubled' | 'full', CounterChild>
  readonly tlsReports: Children<TlsReportTransport, Children<TlsReportResult, CounterChild>>

  readonly webhookAttempts: Children<WebhookResult, HistogramChild>
  readonly webhookRepeatsSkipped = new CounterFamily(
    'outbox_webhook_repeats_skipped_total',
    'Webhook events handed out again by JetStream and not posted, since the webhook had answered them with a 2xx.',
    this.registry
  ).child()

  readonly webhookJobsDropped: Children<WebhookJobDropReason, CounterChild>

  readonly projectorApplyFailures = new CounterFamily(
    'outbox_projector_apply_failures_total', 'Events the projector failed to apply to the read model (each attempt once).', this.registry
  ).child()

  readonly fanoutLag = new HistogramFamily(
    'outbox_webhook_fanout_lag_seconds', 'Time from an event being stored to its fan-out to webhooks.', this.registry, FANOUT_BUCKETS_S
  ).child()

  // every role
  readonly suppressionsAdded: Children<SuppressionReason, CounterChild>
  readonly reportsDropped: Children<ReportDropReason, CounterChild>
  readonly inboundQuotaRefusals: Children<InboundQuota, CounterChild>
  readonly dmarcReports: Children<DmarcReportResult, CounterChild>
  readonly inboundEventsCut = new CounterFamily(
    'outbox_inbound_events_cut_total',
    'inbound.received events cut to OB_INBOUND_EVENT_MAX_BYTES, whose message is kept for the API.',
    this.registry
  ).child()

  constructor () {
    collectDefaultMetrics({ register: this.registry })
    const rate = new CounterFamily('outbox_rate_limit_decisions_total', 'Rate-limit decisions by limit and decision.', this.registry)
    this.rateDecisions = childrenOf(RATE_SCOPES, (scope) => ({
      allowed: rate.child({ scope, decision: 'allowed' }), limited: rate.child({ scope, decision: 'limited' })
    }))
    const outcomes = new CounterFamily(
      'outbox_delivery_outcomes_total', 'Recipient delivery outcomes: each final one once, deferred once per attempt.', this.registry
    )
    this.deliveryOutcomes = childrenOf(ENVIRONMENTS, (environment) =>
      childrenOf(DELIVERY_OUTCOMES, (outcome) => outcomes.child({ environment, outcome })))
    const bounces = new CounterFamily(
      'outbox_bounces_total', 'Bounced recipients by type and category (SMTP replies and asynchronous reports).', this.registry
    )
    this.bounces = childrenOf(ENVIRONMENTS, (environment) => childrenOf(BOUNCE_TYPES, (type) =>
      childrenOf(BOUNCE_CATEGORY_LABELS, (category) => bounces.child({ environment, type, category }))))
    const complaints = new CounterFamily(
      'outbox_complaints_total', 'Complaints (feedback reports, or simulated by sandbox keys).', this.registry
    )
    this.complaints = childrenOf(ENVIRONMENTS, (environment) => complaints.child({ environment }))
    const smtp = new HistogramFamily(
      'outbox_smtp_attempt_duration_seconds',
      'SMTP attempts by destination class and result, with their duration.',
      this.registry, SMTP_BUCKETS_S
    )
    this.smtpAttempts = childrenOf(DESTINATION_CLASSES, (destination) =>
      childrenOf(SMTP_RESULTS, (result) => smtp.child({ destination, result })))
    const lanes = new CounterFamily(
      'outbox_egress_lane_changes_total', 'Egress lanes (source × provider) slowed, paused or taken out by a reply rule.', this.registry
    )
    this.egressLaneChanges = childrenOf(['slow', 'pause', 'out'] as const, (action) => lanes.child({ action }))
    const recoveries = new CounterFamily(
      'outbox_egress_lane_recoveries_total',
      'Recovery steps of egress lanes a reply slowed: rate doubled, or back at full rate (each counted by one engine).', this.registry
    )
    this.egressLaneRecoveries = childrenOf(['doubled', 'full'] as const, (step) => recoveries.child({ step }))
    const tlsReports = new CounterFamily(
      'outbox_tls_reports_total', 'TLS reports (RFC 8460) to a domain\'s rua, by transport and what became of them.', this.registry
    )
    this.tlsReports = childrenOf(TLS_REPORT_TRANSPORTS, (transport) =>
      childrenOf(TLS_REPORT_RESULTS, (result) => tlsReports.child({ transport, result })))
    const webhooks = new HistogramFamily(
      'outbox_webhook_attempt_duration_seconds',
      'Webhook delivery attempts by result, with their duration.',
      this.registry, WEBHOOK_BUCKETS_S
    )
    this.webhookAttempts = childrenOf(WEBHOOK_RESULTS, (result) => webhooks.child({ result }))
    const jobDrops = new CounterFamily(
      'outbox_webhook_jobs_dropped_total', 'Webhook jobs ended without an attempt, since none can be made, by reason.', this.registry
    )
    this.webhookJobsDropped = childrenOf(WEBHOOK_JOB_DROP_REASONS, (reason) => jobDrops.child({ reason }))
    const suppressions = new CounterFamily(
      'outbox_suppressions_added_total', 'Addresses added to suppression lists, by reason.', this.registry
    )
    this.suppressionsAdded = childrenOf(SUPPRESSION_REASONS, (reason) => suppressions.child({ reason }))
    const drops = new CounterFamily(
      'outbox_inbound_reports_dropped_total',
      'Bounce and complaint reports dropped because they act on no message and recipient of ours.',
      this.registry
    )
    this.reportsDropped = childrenOf(REPORT_DROP_REASONS, (reason) => drops.child({ reason }))
    const quotas = new CounterFamily(
      'outbox_inbound_quota_refusals_total',
      'Inbound SMTP commands refused because a route or a sending address is past its quota for the window.',
      this.registry
    )
    this.inboundQuotaRefusals = childrenOf(INBOUND_QUOTAS, (quota) => quotas.child({ quota }))
    const dmarc = new CounterFamily(
      'outbox_dmarc_reports_total', 'DMARC aggregate reports mailed to a domain\'s report address, by what became of them.', this.registry
    )
    this.dmarcReports = childrenOf(DMARC_REPORT_RESULTS, (result) => dmarc.child({ result }))

    this.readGauge('outbox_http_in_flight', 'HTTP requests being answered.')
    this.readGauge('outbox_event_stream_sockets', 'Open WebSocket event-stream connections.')
    this.readGauge('outbox_destinations_suspended', 'Destinations suspended (or being probed) after answering only 4xx.')
    this.readGauge('outbox_shard_owned', 'Whether this process holds the lease of a shard (1) or not (0).', ['shard'])
    this.readGauge(
      'outbox_jetstream_consumer_pending', 'Messages stored for a consumer and not yet delivered to it.', ['stream', 'consumer']
    )
    this.readGauge(
      'outbox_jetstream_consumer_ack_pending', 'Messages delivered to a consumer and not yet acknowledged.', ['stream', 'consumer']
    )
    this.readGauge(
      'outbox_jetstream_consumer_redelivered', 'Messages delivered to a consumer more than once and not yet acknowledged.',
      ['stream', 'consumer']
    )
    this.readGauge('outbox_nats_connected', 'Whether the connection to NATS is up (1) or not (0).')
    this.readGauge(
      'outbox_projector_backoff_seconds', 'How long the projector waits before it tries the read model again (0 while applying succeeds).'
    )
    const orgStream = ['organization', 'stream']
    this.readGauge('outbox_reputation_volume', 'Live sends of a stream in its reputation window: delivered plus hard-bounced.', orgStream)
    this.readGauge('outbox_reputation_bounce_rate', 'A stream\'s hard-bounce rate in its reputation window (a fraction).', orgStream)
    this.readGauge('outbox_reputation_complaint_rate', 'A stream\'s complaint rate in its reputation window (a fraction).', orgStream)
    this.readGauge('outbox_stream_paused', '1 for each stream the reputation guard keeps paused.', orgStream)
    this.readGauge('outbox_redis_connected', 'Whether the connection to Redis is ready (1) or not (0).')
    this.readGauge('outbox_redis_noeviction', 'Whether Redis runs with maxmemory-policy noeviction (1) or another policy (0).')
    this.readGauge('outbox_role', 'The parts this process runs (1 per role).', ['role'])
    const lane = ['source', 'provider']
    this.readGauge('outbox_egress_lane_connections', 'Connections open from a source to a provider, across the cluster.', lane)
    this.readGauge('outbox_egress_lane_messages_per_minute', 'A lane\'s rate now: its limit times its throttle factor.', lane)
    this.readGauge('outbox_egress_lane_rate_factor', 'A lane\'s throttle factor: 1 at full rate, below 1 slowed by a reply.', lane)
    this.readGauge('outbox_egress_lane_stopped', 'Whether a lane is paused or out for its provider (1) or not (0).', lane)
    this.readGauge('outbox_egress_lane_waiting', 'Messages waiting for a lane (its rate, a pause, warm-up or connections).', lane)
    this.readGauge('outbox_egress_lane_oldest_waiting_seconds', 'How long the oldest message waiting for a lane has waited.', lane)
    this.readGauge('outbox_egress_warmup_sent_today', 'Messages a warming source sent to a provider today (UTC).', lane)
    this.readGauge('outbox_egress_warmup_allowance_today', 'A warming source\'s allowance per provider today.', lane)
  }

  /** Counts one HTTP request; the route is a route-table label, the status a number. */
  request (route: string, status: number, ms: number): void {
    let series = this.routes.get(route)
    if (series === undefined) this.routes.set(route, series = { byStatus: new Map(), duration: this.httpDuration.child({ route }) })
    let counter = series.byStatus.get(status)
    if (counter === undefined) series.byStatus.set(status, counter = this.httpRequests.child({ route, status: String(status) }))
    counter.inc()
    series.duration.observe(ms)
  }

  /**
   * Adds a reader to a read-at-scrape gauge. Several parts may read into one family (each with its own
   * labels); a gauge with no label takes the sum of its readers.
   */
  read (name: string, reader: (set: (value: number, labels?: Record<string, string>) => void) => void): void {
    const list = this.readers.get(name)
    if (list === undefined) throw new Error(`no gauge ${name}`)
    list.push(reader)
  }

  /** The exposition text of every series. */
  async render (): Promise<string> {
    return await this.registry.metrics()
  }

  get contentType (): string {
    return this.registry.contentType
  }

  private readGauge (name: string, help: string, labelNames: string[] = []): void {
    const readers: Array<(set: (value: number, labels?: Record<string, string>) => void) => void> = []
    this.readers.set(name, readers)
    // eslint-disable-next-line no-new -- registered with the registry, which keeps it
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect () {
        this.reset()
        if (labelNames.length === 0) {
          let sum = 0
          for (const r of readers) r((v) => { sum += v })
          this.set(sum)
          return
        }
        for (const r of readers) r((v, labels) => { this.set(labels ?? {}, v) })
      }
    })
  }
}
