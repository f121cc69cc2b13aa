import { publishWebhookJobBatch, webhookJobJson, type JsPublish, type StoredWebhookJob } from '../protocol/mod.ts'

/** A batch is written at most this long after its first job was parked… */
const PARK_FLUSH_MS = 10
/** …or as soon as it holds this many jobs or bytes (a shard consumer pulls up to 256 messages: at most 16 MB). */
const PARK_MAX_JOBS = 128
const PARK_MAX_BYTES = 64 * 1024

interface Batch {
  jobs: StoredWebhookJob[]
  serialized: string[]
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
   * already serialised, which saves serialising it again).
   */
  park (job: StoredWebhookJob, eventJson?: string): Promise<void> {
    const s = webhookJobJson(job, eventJson)
    let b = this.open.get(job.webhook_id)
    if (b !== undefined && b.bytes + s.length > PARK_MAX_BYTES) {
      this.flush(job.webhook_id)
      b = undefined
    }
    if (b === undefined) b = this.openBatch(job.webhook_id)
    b.jobs.push(job)
    b.serialized.push(s)
    b.bytes += s.length
    if (b.jobs.length >= PARK_MAX_JOBS) this.flush(job.webhook_id)
    return b.stored
  }

  private openBatch (webhookId: string): Batch {
    let resolve!: () => void
    let reject!: (err: unknown) => void
    const stored = new Promise<void>((resolve_, reject_) => { resolve = resolve_; reject = reject_ })
    const b: Batch = { jobs: [], serialized: [], bytes: 0, stored, resolve, reject, timer: setTimeout(() => this.flush(webhookId), PARK_FLUSH_MS) }
    this.open.set(webhookId, b)
    return b
  }

  private flush (webhookId: string): void {
    const b = this.open.get(webhookId)
    if (b === undefined) return
    this.open.delete(webhookId)
    clearTimeout(b.timer)
    const w = publishWebhookJobBatch(this.js, this.shards, b.jobs, b.serialized).then(b.resolve, (err: unknown) => b.reject(err))
    this.writing.add(w)
    void w.finally(() => this.writing.delete(w))
  }

  /** Writes every open batch now and waits for all writes. */
  async flushAll (): Promise<void> {
    for (const id of [...this.open.keys()]) this.flush(id)
    await Promise.all([...this.writing])
  }
}
