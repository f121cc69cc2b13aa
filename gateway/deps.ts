import type { NatsConnection } from '@nats-io/transport-node'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import type { TrackingRecorder } from '../stores/events/mod.ts'
import type { MessageStore } from '../stores/read_model/mod.ts'
import type { WebhookJobQueue } from '../stores/webhooks/mod.ts'
import type { RateLimiter } from './rate_limit.ts'
import type { AuthFailureGuard } from './auth.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'
import type { ClientAddresses } from './http/client_address.ts'
import type { SecurityLog } from './security_log.ts'
import type { AuditLog } from '../stores/audit/mod.ts'
import type { AnalyzePool } from './analyze_pool.ts'
import type { ImportCheckPool } from './import_check_pool.ts'
import type { SendService } from './send/service.ts'
import type { ScheduleState } from '../stores/schedule/mod.ts'
import type { IdempotencyStore } from './idempotency/mod.ts'
import type { MessageContentStore } from '../stores/message_content/mod.ts'
import type { DomainHealthService } from './control/health_watch.ts'

/** What every handler may use; built once in `main.ts` (which also closes what needs closing) and passed down. */
export interface GatewayDeps {
  readonly config: Config
  readonly log: Logger
  readonly nc: NatsConnection
  readonly redis: Redis
  readonly cp: ControlPlane
  /** The read model of messages: written by the send path, read by GET /v1/messages, /v1/events and /v1/stats. */
  readonly messages: MessageStore
  readonly limiter: RateLimiter
  readonly authGuard: AuthFailureGuard
  /** The client address of a request: the peer, or `X-Forwarded-For` behind a trusted proxy. */
  readonly clientAddresses: ClientAddresses
  /** The process's metrics (every role's), served at GET /metrics. */
  readonly metrics: OutboxMetrics
  readonly security: SecurityLog
  /** Every change to configuration, recorded by the request pipeline for routes that declare `audit` (gateway/audit.ts). */
  readonly audit: AuditLog
  /** Content analysis off the event loop (POST /v1/messages/analyze). */
  readonly analyzer: AnalyzePool
  /** Suppression import bodies read and checked off the event loop (POST /v1/suppressions/import). */
  readonly importChecker: ImportCheckPool
  /** The send path (POST /v1/messages/send and /batch). */
  readonly send: SendService
  /** Idempotency-Key records of every endpoint that takes one, and of repeated Message-IDs in SMTP submission. */
  readonly idempotency: IdempotencyStore
  /** Open, click and unsubscribe events from tracking links; the installation secret is read once at start. */
  readonly tracking: TrackingRecorder
  /** Test events for webhooks (POST /v1/webhooks/{id}/test). */
  readonly webhookJobs: WebhookJobQueue
  /** Cancels and new times of scheduled messages (POST /v1/messages/{id}/cancel, PATCH /v1/messages/{id}). */
  readonly schedule: ScheduleState
  /** Messages as rendered for sending (GET /v1/messages/{id}/content); the engine records them. */
  readonly messageContent: MessageContentStore
  /** Live domain health checks (GET /v1/domains/{id}/health) and the periodic round that reports changes for the worse. */
  readonly domainHealth: DomainHealthService
}
