import type { JsMsg } from '@nats-io/jetstream'
import type { Logger } from 'pino'
import { isJobRef, webhookJobsOf, type StoredWebhookJob, type WebhookJob } from '../stores/webhooks/mod.ts'
import type { ControlPlane } from '../stores/control_plane/mod.ts'
import type { AckBatch } from './ack_batch.ts'
import type { AttemptSource } from './attempts.ts'
import type { EventReader } from './event_reader.ts'
import type { JobWriter } from './job_writer.ts'
import { handBackMs } from './endpoints.ts'
import { deliverable, dropReason, held, pausedWaitMs } from './job_eligibility.ts'
import { batchSettles, type Settle } from './settle.ts'

/** A job redelivered up to this much before it is due is attempted now rather than delayed again. */
const EARLY_SLACK_MS = 50
/** A parked job whose event could not be read is stored again, due after this long. */
const EVENT_READ_RETRY_MS = 5000

/**
 * The way in for job messages from the shard consumers: parked first attempts, retries and jobs handed back. A
 * message holds one job or a batch of one webhook's jobs; each job that is due and still owed becomes an attempt
 * at its endpoint (AttemptSource), and what the endpoint cannot take now goes back to the stream with a delay
 * estimated from the endpoint's pace (not an attempt: nothing changes).
 */
export class JobIntake {
  constructor (
    private readonly cp: ControlPlane,
    private readonly source: AttemptSource,
    private readonly jobs: JobWriter,
    private readonly events: EventReader,
    private readonly acks: AckBatch,
    private readonly logger: Logger
  ) {}

  /** Takes one job message; returns at once, the attempts run in the endpoint's queue. */
  accept (m: JsMsg): void {
    // Work for an endpoint known to be stalled goes back unread (the webhook id is the subject's last token), unless
    // the webhook's URL changed since: then it goes to the new one.
    const webhookId = m.subject.slice(m.subject.lastIndexOf('.') + 1)
    const stalled = this.source.endpoints.stalled(webhookId, this.cp.webhooks.getBy('id', webhookId)?.url, Date.now())
    if (stalled !== undefined) { m.nak(handBackMs(stalled, Date.now())); return }
    let all: StoredWebhookJob[]
    try {
      all = webhookJobsOf(m.json())
    } catch {
      // no engine wrote it, and no one can be told; a plain term(): nats-server 2.9 ignores one with a reason
      this.logger.error({ seq: m.seq, subject: m.subject }, 'not a webhook job; dropped')
      m.term()
      return
    }
    const first = all[0]!
    const webhook = this.cp.webhooks.get(`${first.org_id}.${first.webhook_id}`)
    if (all.some((j) => held(j, webhook))) { m.nak(pausedWaitMs()); return }
    const jobs = all.filter((j) => j.webhook_id === first.webhook_id && deliverable(j, webhook))
    // Jobs that cannot be attempted end with their message: counted once it is sure to end (not handed back whole).
    const dropRest = (): void => { if (jobs.length < all.length) this.source.dropped(dropReason(webhook), all.length - jobs.length) }
    if (jobs.length === 0 || webhook === undefined) { dropRest(); this.acks.add(m); return }
    const now = Date.now()
    const wait = Math.min(...jobs.map((j) => j.due_at)) - now
    if (wait > EARLY_SLACK_MS) { m.nak(wait); return }
    const requeue = async (job: StoredWebhookJob, delayMs: number): Promise<void> => await this.jobs.requeue(job, delayMs)
    const settles: Settle[] = all.length === 1 ? [m] : batchSettles(m, jobs, requeue, this.acks)
    const target = this.source.target(webhook)
    if (target === undefined) {
      dropRest()
      jobs.forEach((job, i) => {
        const settle = settles[i]!
        void this.withEvent(job, settle).then((full) => { if (full !== undefined) this.source.failInvalidUrl(settle, full, webhook) })
      })
      return
    }
    const q = target.queue
    // An endpoint that does not keep pace takes a batch only as far as it has free slots; the rest is
    // parked again (one message) until it is likely to have room.
    const take = q.keepsPace(now) ? jobs.length : Math.min(jobs.length, q.freeSlots)
    if (take === 0 || !q.canTake(take, now)) { m.nak(handBackMs(q, now)); return }
    dropRest()
    const recheck = m.redelivered
    jobs.forEach((job, i) => {
      const settle = settles[i]!
      if (i >= take) { settle.nak(handBackMs(q, now)); return }
      if (!isJobRef(job)) { this.source.offer(target, { settle, job, webhook, url: target.url, recheck }); return }
      // A parked job names its event: read it now that the attempt is about to be made.
      void this.withEvent(job, settle).then((full) => {
        if (full !== undefined) this.source.offer(target, { settle, job: full, webhook, url: target.url, recheck })
      })
    })
  }

  /**
   * The job with its event: read from OB_EVENTS for a parked job. When NATS cannot answer, the job is stored
   * again for later; when the event is no longer there (older than OB_EVENTS keeps, or purged) or what is stored
   * at its sequence is not that event, it cannot be sent and is dropped with a warning.
   */
  private async withEvent (job: StoredWebhookJob, settle: Settle): Promise<WebhookJob | undefined> {
    if (!isJobRef(job)) return job
    try {
      const full = await this.events.job(job)
      if (full === undefined) {
        this.logger.warn({ webhook_id: job.webhook_id, event_id: job.event_id, event_seq: job.event_seq },
          'parked webhook event no longer in the event stream, or not readable there; dropped')
        this.source.dropped('event_missing')
        this.acks.add(settle)
      }
      return full
    } catch (err) {
      this.logger.warn({ err, webhook_id: job.webhook_id }, 'cannot read a parked webhook event; it will be tried again')
      settle.nak(EVENT_READ_RETRY_MS)
      return undefined
    }
  }
}
