import type { JsMsg } from '@nats-io/jetstream'
import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import type { Config } from '../../config/mod.ts'
import {
  HDR_SIGNATURE, DeliveryLog, deliveryId, publishWebhookJob,
  type ControlPlane, type WebhookJob, type WebhookRecord
} from '../protocol/mod.ts'
import { signatureHeader } from './sign.ts'
import { retryDelayMs } from './retry.ts'
import { EndpointQueue } from './endpoint_queue.ts'
import { ackSoon } from './ack_batch.ts'
import type { WebhookHttpClient, AttemptResult } from './http_client.ts'

/** Jobs waiting per endpoint beyond those in flight; more are handed back to the stream until it catches up. */
const MAX_WAITING_PER_ENDPOINT = 1000
/** Jobs waiting at endpoints that keep pace; above it (or a second of their work) the engine stops taking work. */
const MAX_MOVING_BACKLOG = 500
/** The backlog is summed again after this many accepted jobs or this long, whichever comes first. */
const BACKLOG_CHECK_JOBS = 32
const BACKLOG_CHECK_MS = 5
/** A job redelivered up to this much before it is due is attempted now rather than delayed again. */
const EARLY_SLACK_MS = 50

/**
 * Whether a job may still be attempted: the webhook exists and is active (test events: exists), and the event
 * was not fanned out before the webhook last turned failed. Deleted, paused or failed: the job is dropped.
 */
export function deliverable (job: WebhookJob, webhook: WebhookRecord | undefined): webhook is WebhookRecord {
  if (webhook === undefined) return false
  if (job.test === true) return true
  if (webhook.status !== 'active') return false
  return webhook.failed_at === undefined || job.created_at > Date.parse(webhook.failed_at)
}

/** How an attempt's message is settled: a job message from the stream, or a first attempt made at fan-out. */
interface Settle { ack: () => void, nak: (delayMs?: number) => void, working: () => void }

interface Work { m: Settle, job: WebhookJob, webhook: WebhookRecord, url: URL }

/** A first attempt is made at fan-out only while its endpoint has fewer than this many jobs waiting. */
const DIRECT_MAX_WAITING = 500

/**
 * Makes delivery attempts: picks the endpoint queue, signs the exact body sent, POSTs, records the attempt,
 * then schedules the next attempt or marks the webhook failed. One per process, shared by the shard consumers.
 */
export class WebhookDispatcher {
  private readonly endpoints = new Map<string, EndpointQueue<Work>>()
  private readonly log: DeliveryLog
  private draining = false

  constructor (
    private readonly config: Config,
    private readonly nc: NatsConnection,
    private readonly cp: ControlPlane,
    deliveryLog: DeliveryLog,
    private readonly http: WebhookHttpClient,
    private readonly logger: Logger
  ) {
    this.log = deliveryLog
  }

  /** Takes one job message from a shard consumer; returns at once, the attempt runs in its endpoint queue. */
  accept (m: JsMsg): void {
    if (this.draining) { m.nak(); return }
    let job: WebhookJob
    try {
      job = m.json<WebhookJob>()
    } catch {
      m.term('not a webhook job')
      return
    }
    const webhook = this.cp.webhooks.get(`${job.org_id}.${job.webhook_id}`)
    if (!deliverable(job, webhook)) { ackSoon(m); return }
    const wait = job.due_at - Date.now()
    if (wait > EARLY_SLACK_MS) { m.nak(wait); return }
    let url: URL
    try {
      url = new URL(webhook.url)
    } catch {
      void this.finish({ m, job, webhook, url: new URL('https://invalid.invalid/') }, { statusCode: 0, durationMs: 0, error: 'invalid_url' }, new Date())
      return
    }
    const q = this.endpoint(url.origin)
    if (!q.offer({ m, job, webhook, url })) m.nak(Math.round(q.retryLaterMs(Date.now()) * (1 + Math.random() * 0.5)))
  }

  private endpoint (origin: string): EndpointQueue<Work> {
    let q = this.endpoints.get(origin)
    if (q === undefined) {
      q = new EndpointQueue<Work>(this.config.webhook.endpointConcurrency, MAX_WAITING_PER_ENDPOINT, async (w) => await this.attempt(w))
      this.endpoints.set(origin, q)
    }
    return q
  }

  /**
   * The fast path for attempt 1: when the endpoint is making progress and has room, the fan-out makes the
   * attempt itself instead of writing a job and reading it back (two JetStream round trips fewer per event).
   * Resolves once the attempt is made and its retry (if any) is stored as a job; rejects when that could not
   * be stored, and the caller then hands the event back. Returns undefined when the endpoint has no room:
   * the caller queues a job as usual.
   */
  offerDirect (job: WebhookJob, webhook: WebhookRecord, event: Pick<JsMsg, 'working'>): Promise<void> | undefined {
    if (this.draining) return undefined
    let url: URL
    try { url = new URL(webhook.url) } catch { return undefined }
    const q = this.endpoint(url.origin)
    if (!q.canHold(Date.now(), DIRECT_MAX_WAITING)) return undefined
    return new Promise<void>((resolve, reject) => {
      const m: Settle = {
        ack: resolve,
        // A direct attempt that must wait becomes a job due after the delay, like any other.
        nak: (delayMs = 0) => {
          publishWebhookJob(this.nc, this.config.engine.shards, { ...job, due_at: Date.now() + delayMs }).then(resolve, reject)
        },
        working: () => event.working()
      }
      if (!q.offer({ m, job, webhook, url })) m.nak(0)
    })
  }

  private backlogCheckedAt = 0
  private acceptedSinceCheck = 0
  private full = false

  /**
   * Backpressure for the fan-out and the shard consumers: true while the endpoints that keep pace already
   * hold about a second of their work. Dead or slow receivers do not count, so they cannot stop the pull for
   * healthy ones; their overflow waits in the job stream instead.
   */
  saturated (): boolean {
    const now = Date.now()
    if (++this.acceptedSinceCheck < BACKLOG_CHECK_JOBS && now - this.backlogCheckedAt < BACKLOG_CHECK_MS) return this.full
    this.backlogCheckedAt = now
    this.acceptedSinceCheck = 0
    let backlog = 0
    let capacity = 0
    for (const q of this.endpoints.values()) {
      const p = q.pacing(now)
      backlog += p.waiting
      capacity += p.capacity
    }
    // Full when the endpoints that keep pace hold about a second of their work (or the absolute limit).
    this.full = capacity > 0 && backlog >= Math.min(MAX_MOVING_BACKLOG, capacity)
    return this.full
  }

  private async attempt (w: Work): Promise<void> {
    // The record may have changed while the job waited for a slot.
    const current = this.cp.webhooks.get(`${w.job.org_id}.${w.job.webhook_id}`)
    if (!deliverable(w.job, current)) { ackSoon(w.m); return }
    const at = new Date()
    const body = JSON.stringify(w.job.event)
    const signature = signatureHeader(current.secret, body, Math.floor(at.getTime() / 1000))
    const result = await this.http.post(w.url, body, { [HDR_SIGNATURE]: signature })
    await this.finish({ ...w, webhook: current }, result, at)
  }

  private async finish (w: Work, result: AttemptResult, at: Date): Promise<void> {
    const { m, job, webhook } = w
    this.log.record(webhook.id, {
      id: deliveryId(at.getTime()),
      event_id: job.event.id,
      event_type: job.event.type,
      attempt: job.attempt,
      status_code: result.statusCode === 0 ? null : result.statusCode,
      duration_ms: result.durationMs,
      error: result.error,
      at: at.toISOString()
    }).catch((err: unknown) => this.logger.warn({ err, webhook_id: webhook.id }, 'cannot record webhook delivery attempt'))
    if (result.error === null || job.test === true) { ackSoon(m); return }
    const delay = retryDelayMs(this.config.webhook.retryScheduleS, job.attempt)
    if (delay !== undefined) {
      try {
        await publishWebhookJob(this.nc, this.config.engine.shards, { ...job, attempt: job.attempt + 1, due_at: Date.now() + delay })
        m.ack()
      } catch (err) {
        this.logger.warn({ err, webhook_id: webhook.id }, 'cannot schedule webhook retry; the attempt will be made again')
        m.nak(5000)
      }
      return
    }
    await this.markFailed(webhook)
    m.ack()
  }

  /**
   * The last retry failed: the webhook becomes `failed` with `failed_at`. Every job of an event fanned out
   * before that moment is dropped when it comes up, so a webhook revived later (PATCH status active) receives
   * new events only. (Jobs are not purged from the stream: a subject-filtered purge can disturb the shard's
   * consumer on nats-server 2.9, and dropping on arrival costs one ack.)
   */
  private async markFailed (webhook: WebhookRecord): Promise<void> {
    const key = `${webhook.org_id}.${webhook.id}`
    try {
      await this.cp.webhooks.modify(key, (cur) => {
        if (cur.status !== 'active') return undefined
        const now = new Date().toISOString()
        return { ...cur, status: 'failed', failed_at: now, updated_at: now }
      })
      this.logger.warn({ webhook_id: webhook.id }, 'webhook marked failed after its last retry')
    } catch (err) {
      this.logger.error({ err, webhook_id: webhook.id }, 'cannot mark webhook failed')
    }
  }

  /** Re-sends a working() for every waiting job so none is redelivered while it waits for its endpoint. */
  keepAlive (): void {
    for (const q of this.endpoints.values()) for (const w of q.waiting) w.m.working()
    for (const [origin, q] of this.endpoints) if (q.idle) this.endpoints.delete(origin)
  }

  /** Hands waiting jobs back to the stream and waits for attempts in flight, up to the deadline. */
  async drain (deadline: number): Promise<void> {
    this.draining = true
    for (const q of this.endpoints.values()) for (const w of q.takeWaiting()) w.m.nak()
    while ([...this.endpoints.values()].some((q) => q.active > 0) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
