import type { Logger } from 'pino'
import { deliveryId, REQUEST_EXCERPT_CHARS, type DeliveryLog, type WebhookJob } from '../stores/webhooks/mod.ts'
import { type ControlPlane } from '../stores/control_plane/mod.ts'
import { type WebhookRecord } from '../protocol/mod.ts'
import { retryDelayMs } from './retry.ts'
import type { AckBatch } from './ack_batch.ts'
import type { Settle } from './settle.ts'
import type { AttemptResult } from './http_client.ts'
import { webhookResult, type OutboxMetrics } from '../stores/metrics/mod.ts'

/** The start of a body sent, as text (a Buffer is only sliced where it is to be kept). */
function excerptOf (body: string | Buffer): string {
  return typeof body === 'string'
    ? body.slice(0, REQUEST_EXCERPT_CHARS)
    : body.subarray(0, REQUEST_EXCERPT_CHARS).toString('utf8')
}

/** A retry that could not be stored: the attempt's message comes back after this long and is tried again. */
const RETRY_STORE_FAILED_MS = 5000

/**
 * What follows an attempt, in one place: the attempt goes into the delivery log; then the job is done (a
 * success, or a test event or a replay, which are attempted once), or its retry is stored as a new job due after the
 * schedule's delay, or, after the last retry, the webhook becomes `failed`.
 */
export class AttemptOutcomes {
  constructor (
    private readonly retryScheduleS: readonly number[],
    private readonly log: DeliveryLog,
    private readonly cp: ControlPlane,
    private readonly storeRetry: (job: WebhookJob) => Promise<void>,
    private readonly acks: AckBatch,
    private readonly logger: Logger,
    private readonly metrics: OutboxMetrics
  ) {}

  /** `body`: what was sent, when it was (not for an attempt refused before sending). */
  async settle (
    m: Settle, job: WebhookJob, webhook: WebhookRecord, result: AttemptResult, at: Date, body?: string | Buffer
  ): Promise<void> {
    this.metrics.webhookAttempts[webhookResult(result.error)].observe(result.durationMs / 1000)
    this.log.record(webhook.id, {
      id: deliveryId(at.getTime()),
      event_id: job.event.id,
      event_type: job.event.type,
      attempt: job.attempt,
      status_code: result.statusCode === 0 ? null : result.statusCode,
      duration_ms: result.durationMs,
      error: result.error,
      at: at.toISOString(),
      test: job.test === true,
      request_body: body !== undefined && (result.error !== null || job.test === true) ? excerptOf(body) : null,
      response_body: result.responseBody
    }, job.test === true ? undefined : job.event.timestamp).catch((err: unknown) =>
      this.logger.warn({ err, webhook_id: webhook.id }, 'cannot record webhook delivery attempt'))
    if (result.error === null || job.test === true || job.replay === true) { this.acks.add(m); return }
    const delay = retryDelayMs(this.retryScheduleS, job.attempt)
    if (delay !== undefined) {
      try {
        await this.storeRetry({ ...job, attempt: job.attempt + 1, due_at: Date.now() + delay })
        m.ack()
      } catch (err) {
        this.logger.warn({ err, webhook_id: webhook.id }, 'cannot schedule webhook retry; the attempt will be made again')
        m.nak(RETRY_STORE_FAILED_MS)
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
}
