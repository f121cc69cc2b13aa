import type { JsMsg } from '@nats-io/jetstream'
import type { WebhookRecord } from '../protocol/mod.ts'
import type { WebhookJob } from '../stores/webhooks/mod.ts'
import type { AttemptSource } from './attempts.ts'
import type { JobWriter } from './job_writer.ts'
import type { Settle } from './settle.ts'

/**
 * The way in for the fan-out's first attempts. When the endpoint keeps pace and has room (or has a free slot), the
 * fan-out makes attempt 1 itself, through the same AttemptSource as jobs read from the stream, instead of writing a
 * job and reading it back.
 */
export class DirectAttempts {
  constructor (private readonly source: AttemptSource, private readonly jobs: JobWriter) {}

  /**
   * Resolves once the attempt is made and its retry (if any) is stored as a job; rejects when that could not be
   * stored, and the caller then hands the event back. Returns undefined when the endpoint cannot take it: the
   * caller parks the job.
   */
  offer (job: WebhookJob, webhook: WebhookRecord, event: Pick<JsMsg, 'working'>, body?: Buffer): Promise<void> | undefined {
    const target = this.source.target(webhook)
    if (target === undefined || !target.queue.canTake(1, Date.now())) return undefined
    return new Promise<void>((resolve, reject) => {
      const settle: Settle = {
        ack: resolve,
        // A direct attempt that must wait becomes a job due after the delay, like any other.
        nak: (delayMs = 0) => { this.jobs.requeue(job, delayMs).then(resolve, reject) },
        working: () => event.working()
      }
      this.source.offer(target, { settle, job, webhook, url: target.url, body })
    })
  }
}
