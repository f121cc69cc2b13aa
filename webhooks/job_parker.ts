import {
  isJobRef, publishWebhookJobBatch, requeuedJobMsgId, webhookJobJson, webhookJobMsgId, type StoredWebhookJob
} from '../stores/webhooks/mod.ts'
import { type JsPublish } from '../stores/clients/mod.ts'

/** A batch is written at most this long after its first job was parked… */
const PARK_FLUSH_MS = 10
/** …or as soon as it holds this many jobs or bytes (a shard consumer pulls up to 256 messages: at most 16 MB). */
const PARK_MAX_JOBS = 128
const PARK_MAX_BYTES = 64 * 1024
/** What a job naming its event takes in a batch, at most (ids of the usual length; see WebhookRefBatch). */
const REF_BYTES = 100

interface Batch {
  jobs: StoredWebhookJob[]
  /** The JSON of a job that carries its event (made now, to measure it); none for a job naming its event. */
  serialized: Array<string | undefined>
  /** Each job's message id, which the batch's id is made of (webhookBatchMsgId). */
  ids: string[]
  bytes: number
  /** Settles when the batch is stored; every job of the batch shares it (no promise per parked job). */
  stored: Promise<void>
  resolve: () => void
  reject: (err: unknown) => void
  timer: NodeJS.Timeout
}

/**
 * Parks jobs in the job stream for endpoints that cannot take them now (dead, slow, or behind), gathered
 * per webhook into batch messages. `park` resolves once the job is stored, so the caller acknowledges the
 * event only after that: nothing is lost if the process stops in between (the event is fanned out again).
 */
export class JobParker {
  private readonly open = new Map<string, Batch>()
  private readonly writing = new Set<Promise<void>>()

  constructor (private readonly js: JsPublish, private readonly shards: number) {}

  /**
   * A job whose OB_EVENTS sequence is known is stored naming its event, else with it (`eventJson`: the event
   * already serialised, which saves serialising it again). `again`: the job is stored again by the engine holding it,
   * whose message is acknowledged once this write is stored; its id is then unique to this write (requeuedJobMsgId),
   * so the write is never taken for a repeat of the job's earlier one.
   */
  park (job: StoredWebhookJob, eventJson?: string, again = false): Promise<void> {
    const named = job.test !== true && (isJobRef(job) || job.event_seq !== undefined)
    const s = named ? undefined : webhookJobJson(job, eventJson)
    const size = s?.length ?? REF_BYTES
    let b = this.open.get(job.webhook_id)
    if (b !== undefined && b.bytes + size > PARK_MAX_BYTES) {
      this.flush(job.webhook_id)
      b = undefined
    }
    if (b === undefined) b = this.openBatch(job.webhook_id)
    b.jobs.push(job)
    b.serialized.push(s)
    b.ids.push(again ? requeuedJobMsgId(job) : webhookJobMsgId(job))
    b.bytes += size
    if (b.jobs.length >= PARK_MAX_JOBS) this.flush(job.webhook_id)
    return b.stored
  }

  private openBatch (webhookId: string): Batch {
    let resolve!: () => void
    let reject!: (err: unknown) => void
    const stored = new Promise<void>((resolve_, reject_) => { resolve = resolve_; reject = reject_ })
    const b: Batch = {
      jobs: [], serialized: [], ids: [], bytes: 0, stored, resolve, reject, timer: setTimeout(() => this.flush(webhookId), PARK_FLUSH_MS)
    }
    this.open.set(webhookId, b)
    return b
  }

  private flush (webhookId: string): void {
    const b = this.open.get(webhookId)
    if (b === undefined) return
    this.open.delete(webhookId)
    clearTimeout(b.timer)
    const w = publishWebhookJobBatch(this.js, this.shards, b.jobs, b.serialized, b.ids).then(b.resolve, (err: unknown) => b.reject(err))
    this.writing.add(w)
    void w.finally(() => this.writing.delete(w))
  }

  /** Writes every open batch now and waits for all writes. */
  async flushAll (): Promise<void> {
    for (const id of [...this.open.keys()]) this.flush(id)
    await Promise.all([...this.writing])
  }
}
