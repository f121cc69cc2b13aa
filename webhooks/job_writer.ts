import type { NatsConnection } from '@nats-io/transport-node'
import { STREAM_WEBHOOK_JOBS, type InternalErrorCode } from '../protocol/mod.ts'
import { JsPublisher, StreamRoomWatch } from '../stores/clients/mod.ts'
import { publishWebhookJobBatch, requeuedJobMsgId, webhookJobJson, type StoredWebhookJob, type WebhookJob } from '../stores/webhooks/mod.ts'
import { JobParker } from './job_parker.ts'

/** A first attempt refused because the job stream is at its admission limit; the fan-out tries the event again. */
export class WebhookJobsFullError extends Error {
  readonly code = 'webhook_jobs_full' satisfies InternalErrorCode
  constructor () {
    super('the webhook job stream is at its admission limit')
    this.name = 'WebhookJobsFullError'
  }
}

/** What a job naming its event takes in the stream, about (a parked job that carries its event takes its JSON). */
const JOB_REF_BYTES = 100

/**
 * Every write of this process to the webhook job stream: first attempts parked for later, jobs handed back to
 * wait (their attempt count unchanged), and retries. They share one publisher, so one reply subscription (see
 * JsPublisher), and one parker, so a webhook's jobs of one moment go out as one message. New first attempts are
 * parked only below the stream's admission limit (protocol/store_budget.ts); a job stored again or a retry replaces
 * one already stored, so it may use the room above.
 */
export class JobWriter {
  private readonly js: JsPublisher
  private readonly parker: JobParker
  private readonly room: StreamRoomWatch
  private draining = false

  constructor (nc: NatsConnection, private readonly shards: number) {
    this.js = new JsPublisher(nc)
    this.parker = new JobParker(this.js, shards)
    this.room = new StreamRoomWatch(nc, [STREAM_WEBHOOK_JOBS], 0)
    void this.room.start()
  }

  /**
   * Parks a first attempt in the job stream (batched per webhook); resolves once it is stored. Rejects with
   * WebhookJobsFullError at the stream's admission limit.
   */
  park (job: WebhookJob, eventJson?: string): Promise<void> {
    const bytes = eventJson?.length ?? JOB_REF_BYTES
    if (!this.room.hasRoomFor(bytes)) return Promise.reject(new WebhookJobsFullError())
    this.room.noteWritten(bytes)
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
    this.room.stop()
    this.js.close()
  }
}
