import type { NatsConnection } from '@nats-io/transport-node'
import { JsPublisher } from '../stores/clients/mod.ts'
import { publishWebhookJobBatch, requeuedJobMsgId, webhookJobJson, type StoredWebhookJob, type WebhookJob } from '../stores/webhooks/mod.ts'
import { JobParker } from './job_parker.ts'

/**
 * Every write of this process to the webhook job stream: first attempts parked for later, jobs handed back to
 * wait (their attempt count unchanged), and retries. They share one publisher, so one reply subscription (see
 * JsPublisher), and one parker, so a webhook's jobs of one moment go out as one message.
 */
export class JobWriter {
  private readonly js: JsPublisher
  private readonly parker: JobParker
  private draining = false

  constructor (nc: NatsConnection, private readonly shards: number) {
    this.js = new JsPublisher(nc)
    this.parker = new JobParker(this.js, shards)
  }

  /** Parks a first attempt in the job stream (batched per webhook); resolves once it is stored. */
  park (job: WebhookJob, eventJson?: string): Promise<void> {
    return this.parker.park(job, eventJson)
  }

  /**
   * Stores a job again to be attempted after `delayMs` (the attempt count is unchanged), gathered with other
   * jobs of its webhook into one message; once the drain began, as a message of its own, written at once.
   */
  async requeue (job: StoredWebhookJob, delayMs: number): Promise<void> {
    const waiting = { ...job, due_at: Math.max(job.due_at, Date.now() + delayMs) }
    if (this.draining) await this.storeOne(waiting, true)
    else await this.parker.park(waiting, undefined, true)
  }

  /** Stores the next attempt of a job that failed: a message of its own, since its jittered due time is its own. */
  async storeRetry (job: WebhookJob): Promise<void> {
    await this.storeOne(job)
  }

  /**
   * Stores one job as a message of its own, naming its event when its OB_EVENTS sequence is known.
   * `again`: see JobParker.park.
   */
  private async storeOne (job: StoredWebhookJob, again = false): Promise<void> {
    await publishWebhookJobBatch(this.js, this.shards, [job], [webhookJobJson(job)], again ? [requeuedJobMsgId(job)] : undefined)
  }

  /** From now on nothing is gathered: the open batches are written by `flushAll`, and no later one would be. */
  beginDrain (): void {
    this.draining = true
  }

  /** Writes every open batch now and waits for all batch writes. */
  async flushAll (): Promise<void> {
    await this.parker.flushAll()
  }

  /** After the drain: writes still waiting for their acknowledgement fail (their messages come back). */
  close (): void {
    this.js.close()
  }
}
