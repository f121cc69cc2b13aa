import uWS from 'uWebSockets.js'
import type { NatsConnection } from '@nats-io/transport-node'
import { jetstream, jetstreamManager } from '@nats-io/jetstream'
import type { Redis } from 'ioredis'
import type { Logger } from 'pino'
import type { Config } from '../config/mod.ts'
import { TrackingRecorder } from '../stores/events/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { MessageStore } from '../stores/read_model/mod.ts'
import { WebhookJobQueue } from '../stores/webhooks/mod.ts'
import { createHttpServer, type HttpServer } from './server.ts'
import { ScheduleLedger, ScheduleState, SCHEDULE_STATE_TTL_MS } from '../stores/schedule/mod.ts'
import { ROUTES } from './routes/mod.ts'
import { RateLimiter } from './rate_limit.ts'
import { AuthFailureGuard } from './auth.ts'
import type { OutboxMetrics } from '../stores/metrics/mod.ts'
import { ClientAddresses } from './http/client_address.ts'
import { SecurityLog } from './security_log.ts'
import { AnalyzePool } from './analyze_pool.ts'
import { ImportCheckPool } from './import_check_pool.ts'
import type { GatewayDeps } from './deps.ts'
import { MessageContentStore } from '../stores/message_content/mod.ts'
import { AuditLog } from '../stores/audit/mod.ts'
import { JsPublisher } from '../stores/clients/mod.ts'
import { SendService } from './send/service.ts'
import { registerEventStream } from './ws/event_stream.ts'
import { registerStaticFiles } from './static_files.ts'
import { startSubmission, type SubmissionListener } from './submission/mod.ts'
import { IdempotencyLedger, IdempotencyStore, IDEMPOTENCY_TTL_MS } from './idempotency/mod.ts'
import { DomainHealthService } from './control/health_watch.ts'

/** How often expired suppressions are removed from the store (they stop suppressing at their expiry already). */
export const SUPPRESSION_EXPIRY_SWEEP_MS = 60_000 // 1 min, documented

export interface Gateway {
  readonly port: number
  readonly deps: GatewayDeps
  readonly server: HttpServer
  /** SMTP submission, unless OB_SMTP_SUBMISSION_PORT is 0. */
  readonly submission?: SubmissionListener
  /** Stops accepting, lets in-flight requests finish (up to `timeoutMs`), then closes the socket. */
  drain: (timeoutMs: number) => Promise<void>
}

export async function startGateway (
  config: Config, shared: { nc: NatsConnection, redis: Redis, cp: ControlPlane, log: Logger, metrics: OutboxMetrics }
): Promise<Gateway> {
  const limiter = new RateLimiter(shared.redis, () => { shared.metrics.rateLocalDecisions.inc() })
  const idempotencyLedger = await IdempotencyLedger.open(
    shared.nc, config.nats.replicas, IDEMPOTENCY_TTL_MS, config.nats.publishTimeoutMs, config.nats.storeBytes
  )
  const idempotency = new IdempotencyStore(shared.redis, idempotencyLedger)
  const base = {
    config,
    log: shared.log.child({ part: 'gateway' }),
    nc: shared.nc,
    redis: shared.redis,
    cp: shared.cp,
    messages: new MessageStore(shared.redis, config.stuckAfterMs, (org) => shared.cp.readModelRetention(org)),
    idempotency,
    metrics: shared.metrics
  }
  const deps: GatewayDeps = {
    ...base,
    limiter,
    authGuard: new AuthFailureGuard(limiter, shared.metrics),
    clientAddresses: new ClientAddresses(config.http.trustedProxies),
    security: new SecurityLog(shared.log),
    audit: new AuditLog(await jetstreamManager(shared.nc), new JsPublisher(shared.nc, config.nats.publishTimeoutMs)),
    analyzer: new AnalyzePool(base.log),
    importChecker: new ImportCheckPool(base.log),
    tracking: await TrackingRecorder.open(
      shared.nc, shared.cp, config.secret, config.tracking.tokenTtlMs, async (org, id) => await base.messages.messageTags(org, id)
    ),
    send: new SendService(base),
    webhookJobs: new WebhookJobQueue(shared.nc, {
      shards: config.engine.shards, replicas: config.nats.replicas, storeBytes: config.nats.storeBytes
    }),
    schedule: new ScheduleState(
      shared.redis, await ScheduleLedger.open(shared.nc, config.nats.replicas, SCHEDULE_STATE_TTL_MS, config.nats.storeBytes)
    ),
    messageContent: new MessageContentStore(await jetstreamManager(shared.nc)),
    domainHealth: new DomainHealthService({ ...base, js: jetstream(shared.nc) })
  }
  const server = createHttpServer(deps, ROUTES)
  const eventStream = registerEventStream(server.app, deps)
  registerStaticFiles(server.app, deps.log)
  deps.metrics.read('outbox_http_in_flight', (set) => { set(server.inFlight) })
  const socket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
    server.app.listen(config.http.host, config.http.port, (s) => {
      if (s === false) reject(new Error(`cannot listen on ${config.http.host}:${config.http.port}`))
      else resolve(s)
    })
  }).catch(async (err: unknown) => {
    await Promise.all([deps.analyzer.close(), deps.importChecker.close()])
    deps.send.close()
    throw err
  })
  const port = uWS.us_socket_local_port(socket)
  deps.domainHealth.start()
  const expirySweep = startExpirySweep(deps)
  deps.log.info({ host: config.http.host, port }, 'HTTP API listening')
  let submission: SubmissionListener | undefined
  if (config.submission.enabled) {
    submission = await startSubmission(deps).catch(async (err: unknown) => {
      uWS.us_listen_socket_close(socket)
      await Promise.all([deps.analyzer.close(), deps.importChecker.close()])
      deps.send.close()
      throw err
    })
  }
  return {
    port,
    deps,
    server,
    ...(submission !== undefined ? { submission } : {}),
    async drain (timeoutMs) {
      server.draining = true
      // SMTP sessions finish their transaction (or get 421 at the deadline) while HTTP drains alongside.
      const submissionClosed = submission?.close(timeoutMs)
      eventStream.close()
      const healthStopped = deps.domainHealth.stop()
      clearInterval(expirySweep)
      // New connections are refused at once (a load balancer moves on); requests on open connections are
      // still answered, each with `Connection: close`, so keep-alive clients reconnect elsewhere.
      uWS.us_listen_socket_close(socket)
      const deadline = Date.now() + timeoutMs
      // Quiet for a few ticks, not just zero once: a keep-alive request may be on the wire right after an answer.
      let quietTicks = 0
      while (quietTicks < 5 && Date.now() < deadline) {
        quietTicks = server.inFlight === 0 ? quietTicks + 1 : 0
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      if (server.inFlight > 0) deps.log.warn({ inFlight: server.inFlight }, 'closing with requests still in flight')
      // Connections still open are idle now; close them with a FIN rather than a reset when the process exits.
      // (`close` exists in this uWS build but not in its type declarations.)
      ;(server.app as unknown as { close?: () => void }).close?.()
      await submissionClosed
      await healthStopped
      await Promise.all([deps.analyzer.close(), deps.importChecker.close()])
      deps.send.close()
    }
  }
}

/**
 * Every SUPPRESSION_EXPIRY_SWEEP_MS, deletes the suppressions past their `expires_at` (NATS KV before 2.11 has no
 * per-key expiry). An expired entry already suppresses nothing; the sweep only frees its key. Every gateway runs
 * it: a delete holds only while the entry is the one that expired, so two sweeps at once delete it once.
 */
function startExpirySweep (deps: GatewayDeps): NodeJS.Timeout {
  let running = false
  return setInterval(() => {
    if (running) return
    running = true
    deps.cp.suppressionLists.sweep()
      .then((n) => { if (n > 0) deps.log.info({ deleted: n }, 'expired suppressions removed') })
      .catch((err: unknown) => { deps.log.warn({ err }, 'expired suppressions not removed; tried again later') })
      .finally(() => { running = false })
  }, SUPPRESSION_EXPIRY_SWEEP_MS).unref()
}
