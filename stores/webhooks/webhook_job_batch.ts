import { webhookJobSubject, shardOf } from '../../protocol/mod.ts'
import type { JsPublish } from '../clients/mod.ts'
import { isJobRef, webhookJobJson, webhookJobMsgId, type StoredWebhookJob, type WebhookJob, type WebhookJobRef } from './webhook_jobs.ts'

/**
 * Several jobs of one webhook in one stream message: `{"jobs":[<job>, …]}`. Work parked for an endpoint that
 * cannot take it now is written as batches, one message per short batch instead of one per event, so a dead
 * endpoint costs the stream (and the engine reading it back) a small fraction of what its events do.
 */
export interface WebhookJobBatch { jobs: StoredWebhookJob[] }

/**
 * A batch of references only (every job names its event by its OB_EVENTS sequence), in columns: the webhook
 * and org once, then per job `[event_seq, event_id, attempt, due_at - base, created_at - base]`. About 60
 * bytes per parked event instead of 220: a dead endpoint subscribed to every event parks one reference per
 * event, and building, sending, storing and reading back those bytes was most of what it cost the engine.
 */
export interface WebhookRefBatch { webhook_id: string, org_id: string, base: number, refs: RefRow[] }
type RefRow = [number, string, number, number, number]

/** `serialized[i]`: job i as JSON when the caller already made it; a reference may come without. */
export function webhookBatchJson (jobs: readonly StoredWebhookJob[], serialized: ReadonlyArray<string | undefined>): string {
  const rows = jobs.length > 1 ? refRows(jobs) : undefined
  if (rows !== undefined) {
    const base = Math.min(...rows.map((r) => r[4]))
    for (const r of rows) { r[3] -= base; r[4] -= base }
    const batch: WebhookRefBatch = { webhook_id: jobs[0]!.webhook_id, org_id: jobs[0]!.org_id, base, refs: rows }
    return JSON.stringify(batch)
  }
  const all = jobs.map((j, i) => serialized[i] ?? webhookJobJson(j))
  return all.length === 1 ? all[0]! : `{"jobs":[${all.join(',')}]}`
}

/** Every job's row with absolute times, or undefined when one cannot be a row or the jobs are not of one webhook. */
function refRows (jobs: readonly StoredWebhookJob[]): RefRow[] | undefined {
  const first = jobs[0]!
  const rows: RefRow[] = []
  for (const j of jobs) {
    const r = j.org_id === first.org_id && j.webhook_id === first.webhook_id ? refRow(j) : undefined
    if (r === undefined) return undefined
    rows.push(r)
  }
  return rows
}

/** The row of a job that names (or can name) its event; undefined for a test event or a job without a sequence. */
function refRow (j: StoredWebhookJob): RefRow | undefined {
  if (j.test === true || j.replay === true || j.run !== undefined) return undefined
  if (typeof j.created_at !== 'number' || typeof j.due_at !== 'number' || typeof j.attempt !== 'number') return undefined
  if (isJobRef(j)) return [j.event_seq, j.event_id, j.attempt, j.due_at, j.created_at]
  if (j.event_seq === undefined) return undefined
  return [j.event_seq, j.event.id, j.attempt, j.due_at, j.created_at]
}

const enc = new TextEncoder()

/**
 * The message id of a job-stream message holding these jobs (`ids`: each job's own, see webhookJobMsgId): a repeated
 * write of the same jobs is stored once (an event fanned out again after its engine stopped parks the same batch),
 * while any write that differs in one job is stored. A batch's id names its first job and count for reading, and a
 * hash of every job's id, so a batch that repeats an earlier one's first job with other jobs is not dropped.
 */
export function webhookBatchMsgId (ids: readonly string[]): string {
  if (ids.length === 1) return ids[0]!
  // FNV-1a over every id: the first id and the count alone would take a different batch for a repeat.
  let h = 0x811c9dc5
  for (const id of ids) {
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193)
    h = Math.imul(h ^ 0x2c, 0x01000193)
  }
  return `${ids[0]!}+${ids.length}#${(h >>> 0).toString(36)}`
}

/**
 * The id of a job stored again by the engine that holds it (handed back to wait, its old message acknowledged once
 * this write is stored): unique to that write, so it is never taken for a repeat of the job's earlier write.
 */
export function requeuedJobMsgId (job: StoredWebhookJob): string {
  return `${webhookJobMsgId(job)}@${job.due_at}`
}

/**
 * Stores jobs of one webhook as one message (a batch when more than one), with the message id webhookBatchMsgId
 * gives; `ids`: each job's id when not webhookJobMsgId (a job stored again, requeuedJobMsgId).
 */
export async function publishWebhookJobBatch (
  js: JsPublish, shards: number, jobs: readonly StoredWebhookJob[], serialized: ReadonlyArray<string | undefined>, ids?: readonly string[]
): Promise<void> {
  const first = jobs[0]
  if (first === undefined) return
  const payload = enc.encode(webhookBatchJson(jobs, serialized))
  const msgID = webhookBatchMsgId(ids ?? jobs.map(webhookJobMsgId))
  await js.publish(webhookJobSubject(shardOf(first.webhook_id, shards), first.webhook_id), payload, { msgID })
}

/** The jobs of a job-stream message: one plain job, a batch, or a batch of references. Throws on anything else. */
export function webhookJobsOf (data: unknown): StoredWebhookJob[] {
  const d = data as Partial<WebhookJob & WebhookJobBatch & WebhookRefBatch> | null
  if (d !== null && typeof d === 'object') {
    if (Array.isArray(d.jobs)) {
      if (d.jobs.length > 0 && d.jobs.every(isJob)) return d.jobs
    } else if (Array.isArray(d.refs)) {
      const { webhook_id: webhookId, org_id: orgId, base } = d
      const named = typeof webhookId === 'string' && typeof orgId === 'string' && typeof base === 'number'
      if (d.refs.length > 0 && named && d.refs.every(isRefRow)) {
        return d.refs.map((r): WebhookJobRef => ({
          event_seq: r[0], event_id: r[1], org_id: orgId, webhook_id: webhookId, attempt: r[2], due_at: base + r[3], created_at: base + r[4]
        }))
      }
    } else if (isJob(d)) {
      return [d]
    }
  }
  throw new Error('not a webhook job')
}

function isRefRow (r: unknown): r is RefRow {
  return Array.isArray(r) && r.length === 5 && typeof r[0] === 'number' && typeof r[1] === 'string' &&
    typeof r[2] === 'number' && typeof r[3] === 'number' && typeof r[4] === 'number'
}

function isJob (j: unknown): j is StoredWebhookJob {
  const x = j as Partial<WebhookJob & WebhookJobRef> | null
  return x !== null && typeof x === 'object' && typeof x.webhook_id === 'string' && typeof x.org_id === 'string' &&
    typeof x.attempt === 'number' && typeof x.due_at === 'number' &&
    (typeof x.event?.id === 'string' || (x.event === undefined && typeof x.event_seq === 'number' && typeof x.event_id === 'string'))
}
