import {
  isJobRef, publishWebhookJobBatch, requeuedJobMsgId, webhookJobJson, webhookJobMsgId, type StoredWebhookJob
} from '../stores/webhooks/mod.ts'
import { type JsPublish } from '../stores/clients/mod.ts'
import { TurnBatch } from '../stores/batching/mod.ts'

/** A batch is written at most this long after its first job was parked… */
const PARK_FLUSH_MS = 10
/** …or as soon as it holds this many jobs or bytes (a shard consumer pulls up to 256 messages: at most 16 MB). */
const PARK_MAX_JOBS = 128
const PARK_MAX_BYTES = 64 * 1024
/** What a job naming its event takes in a batch, at most (ids of the usual length; see WebhookRefBatch). */
const REF_BYTES = 100

/** A job waiting for its webhook's batch. */
interface ParkedJob {
  job: StoredWebhookJob
  /** Its JSON when it carries its event (made now, to measure it); none for a job naming its event. */
  serialized: string | undefined
  /** Its message id, which the batch's id is made of (webhookBatchMsgId). */
  msgId: string
}

/**
 * Parks jobs in the job stream for endpoints that cannot take them now (dead, slow, or behind), gathered
 * per webhook into batch messages. `park` resolves once the job is stored, so the caller acknowledges the
 * event only after that: nothing is lost if the process stops in between (the event is fanned out again).
 */
export class JobParker {
  /** The batch being gathered per webhook; dropped when it leaves, so idle webhooks keep nothing. */
  private readonly open = new Map<string, TurnBatch<ParkedJob, void>>()
  private readonly writing = new Set<Promise<unknown>>()

  constructor (private readonly js: JsPublish, private readonly shards: number) {}

  /**
   * A job whose OB_EVENTS sequence is known is stored naming its event, else with it (`eventJson`: the event
   * already serialised, which saves serialising it again). `again`: the job is stored again by the engine holding it,
   * whose message is acknowledged once this write is stored; its id is then unique to this write (requeuedJobMsgId),
   * so the write is never taken for a repeat of the job's earlier one.
   */
  async park (job: StoredWebhookJob, eventJson?: string, again = false): Promise<void> {
    const named = job.test !== true && (isJobRef(job) || job.event_seq !== undefined)
    const serialized = named ? undefined : webhookJobJson(job, eventJson)
    await this.batchOf(job.webhook_id).add({ job, serialized, msgId: again ? requeuedJobMsgId(job) : webhookJobMsgId(job) })
  }

  private batchOf (webhookId: string): TurnBatch<ParkedJob, void> {
    let b = this.open.get(webhookId)
    if (b === undefined) {
      const batch: TurnBatch<ParkedJob, void> = new TurnBatch<ParkedJob, void>({
        after: PARK_FLUSH_MS,
        maxItems: PARK_MAX_JOBS,
        maxWeight: PARK_MAX_BYTES,
        weigh: (p) => p.serialized?.length ?? REF_BYTES,
        flush: async (items) => {
          const w = publishWebhookJobBatch(this.js, this.shards, items.map((p) => p.job), items.map((p) => p.serialized),
            items.map((p) => p.msgId))
          this.writing.add(w)
          try {
            await w
          } finally {
            this.writing.delete(w)
            // Nothing gathered since it left: the webhook keeps no batch until its next job.
            if (batch.pending === 0 && this.open.get(webhookId) === batch) this.open.delete(webhookId)
          }
          return new Array<void>(items.length)
        }
      })
      b = batch
      this.open.set(webhookId, b)
    }
    return b
  }

  /** Writes every open batch now and waits for all writes. */
  async flushAll (): Promise<void> {
    for (const b of [...this.open.values()]) b.flush()
    await Promise.all([...this.writing].map(async (w) => await w.catch(() => {})))
  }
}
