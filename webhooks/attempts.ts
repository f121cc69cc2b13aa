import type { Logger } from 'pino'
import type { WebhookRecord } from '../protocol/mod.ts'
import type { WebhookJob } from '../stores/webhooks/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import type { OutboxMetrics, WebhookJobDropReason } from '../stores/metrics/mod.ts'
import type { AckBatch } from './ack_batch.ts'
import type { AnsweredCheck } from './answered_check.ts'
import type { WebhookHttpClient } from './http_client.ts'
import type { AttemptOutcomes } from './outcome.ts'
import type { Settle } from './settle.ts'
import { Endpoints, handBackMs, type EndpointTarget } from './endpoints.ts'
import { deliverable, dropReason, held, pausedWaitMs } from './job_eligibility.ts'
import { signedHeaders } from './sign.ts'

/** An attempt that threw (not a receiver's answer) is made again after this long. */
const ATTEMPT_FAULT_RETRY_MS = 5000

/** One attempt waiting for its endpoint's slot. */
export interface Attempt {
  /** How its message is settled: a job message of the stream, one job of a batch message, or a fan-out's direct attempt. */
  settle: Settle
  job: WebhookJob
  webhook: WebhookRecord
  url: URL
  /**
   * The event envelope as JSON bytes when the fan-out already serialised it (once for all its webhooks); the same
   * bytes are signed and sent, so they are encoded once.
   */
  body?: Buffer
  /** From a message JetStream handed out again: asked about (AnsweredCheck) when its slot comes, before posting. */
  recheck?: boolean
}

/** Where an attempt goes; see Endpoints.target. */
export type AttemptTarget = EndpointTarget<Attempt>

/**
 * The one place attempts are made, whichever way their job came (read from the job stream, or handed over by the
 * fan-out as a first attempt): each is queued at its endpoint and, when its slot comes, checked against the
 * webhook's current record, signed over the exact body sent, POSTed, and handed to AttemptOutcomes.
 */
export class AttemptSource {
  readonly endpoints: Endpoints<Attempt>

  constructor (
    concurrency: number,
    private readonly cp: ControlPlane,
    private readonly http: WebhookHttpClient,
    private readonly outcomes: AttemptOutcomes,
    private readonly answeredCheck: AnsweredCheck,
    private readonly acks: AckBatch,
    private readonly logger: Logger,
    private readonly metrics: OutboxMetrics
  ) {
    this.endpoints = new Endpoints<Attempt>(concurrency, async (a) => await this.make(a), (err, a) => { this.failed(err, a) })
  }

  /** Where the webhook's attempts go; undefined when its URL does not parse. */
  target (webhook: WebhookRecord): AttemptTarget | undefined {
    return this.endpoints.target(webhook)
  }

  /**
   * Queues an attempt at its target's queue (`attempt.url` is the target's); when the endpoint filled up meanwhile
   * (an event was being read), it waits in the stream.
   */
  offer (target: AttemptTarget, attempt: Attempt): void {
    if (!target.queue.offer(attempt)) attempt.settle.nak(handBackMs(target.queue, Date.now()))
  }

  /** A job whose webhook URL does not parse: an attempt that fails as `invalid_url` without a request. */
  failInvalidUrl (settle: Settle, job: WebhookJob, webhook: WebhookRecord): void {
    void this.outcomes.settle(settle, job, webhook, { statusCode: 0, durationMs: 0, responseBody: null, error: 'invalid_url' }, new Date())
  }

  /**
   * Whether the webhook already answered the event with a 2xx, for work JetStream handed out again (see
   * AnsweredCheck); such a repeat is counted and left unsent. Replays and test events are never asked about: they are
   * sent again on purpose.
   */
  async alreadyAnswered (webhookId: string, job: Pick<WebhookJob, 'event' | 'replay' | 'test'>): Promise<boolean> {
    if (job.replay === true || job.test === true) return false
    const answered = await this.answeredCheck.answered(webhookId, job.event)
    if (answered) this.metrics.webhookRepeatsSkipped.inc()
    return answered
  }

  /** Counts jobs that end without an attempt, by why (the caller acknowledges them). */
  dropped (reason: WebhookJobDropReason, jobs = 1): void {
    this.metrics.webhookJobsDropped[reason].inc(jobs)
  }

  private async make (a: Attempt): Promise<void> {
    // The record may have changed while the job waited for a slot.
    const current = this.cp.webhooks.get(`${a.job.org_id}.${a.job.webhook_id}`)
    if (held(a.job, current)) { a.settle.nak(pausedWaitMs()); return }
    if (!deliverable(a.job, current)) { this.dropped(dropReason(current)); this.acks.add(a.settle); return }
    // The URL changed while the attempt waited: it goes to the new URL, in that endpoint's queue (its slots, its pace).
    if (current.url !== a.webhook.url) { this.retarget(a, current); return }
    // Asked here, in the endpoint's slot, so work handed out again waits and counts in the queue like any other.
    if (a.recheck === true && await this.alreadyAnswered(current.id, a.job)) { this.acks.add(a.settle); return }
    const at = new Date()
    const body = a.body ?? Buffer.from(JSON.stringify(a.job.event))
    const result = await this.http.post(current.org_id, a.url, body, signedHeaders(current, a.job.event.id, body, at.getTime()))
    await this.outcomes.settle(a.settle, a.job, current, result, at, body)
  }

  /** An attempt whose webhook's URL changed since it was queued, moved to the new URL's endpoint (see `make`). */
  private retarget (a: Attempt, current: WebhookRecord): void {
    const target = this.target(current)
    if (target === undefined) { this.failInvalidUrl(a.settle, a.job, current); return }
    this.offer(target, { ...a, webhook: current, url: target.url })
  }

  /**
   * An attempt that threw instead of settling (a fault in Outbox or a damaged webhook record, not an answer
   * of the receiver): logged without the record (it holds the secret), and its job comes back after a delay.
   */
  private failed (err: unknown, a: Attempt): void {
    this.logger.error({ err, webhook_id: a.job.webhook_id, event_id: a.job.event.id, attempt: a.job.attempt },
      'webhook attempt failed unexpectedly; it will be made again')
    a.settle.nak(ATTEMPT_FAULT_RETRY_MS)
  }
}
