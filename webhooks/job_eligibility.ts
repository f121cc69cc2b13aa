import type { WebhookRecord } from '../protocol/mod.ts'
import type { WebhookJob } from '../stores/webhooks/mod.ts'

/**
 * Whether a job may be attempted, read from its webhook's record: asked when a job arrives and again when its
 * endpoint's slot comes, since the record may change while the job waits.
 */

/** A job owed to a paused webhook is looked at again this often (plus up to half of it, spread): its delay once active. */
export const PAUSED_RECHECK_MS = 20_000

/** What eligibility reads of a job. */
type JobKind = Pick<WebhookJob, 'test' | 'replay' | 'created_at'>

/**
 * Whether a job may still be attempted: the webhook exists and is active (test events and replays: exists), and the event
 * was not fanned out before the webhook last turned failed. Deleted or failed: the job is dropped; paused: see `held`.
 */
export function deliverable (job: JobKind, webhook: WebhookRecord | undefined): webhook is WebhookRecord {
  if (webhook === undefined) return false
  if (job.test === true || job.replay === true) return true
  if (webhook.status !== 'active') return false
  return webhook.failed_at === undefined || job.created_at > Date.parse(webhook.failed_at)
}

/**
 * Why a job that is neither deliverable nor held is dropped (counted in outbox_webhook_jobs_dropped_total): its webhook
 * was deleted, or it is failed (or failed after the job's event was fanned out).
 */
export function dropReason (webhook: WebhookRecord | undefined): 'webhook_deleted' | 'webhook_failed' {
  return webhook === undefined ? 'webhook_deleted' : 'webhook_failed'
}

/**
 * Whether a job waits for its webhook to be active again: the webhook is paused and still owes the job (an event
 * fanned out while it was active, not before it last turned failed). Events that occur while it is paused make no
 * job (the fan-out skips it), so what waits is only what it owed when it was paused: its retries resume on the
 * schedule once it is active, each attempt counted as before.
 */
export function held (job: JobKind, webhook: WebhookRecord | undefined): boolean {
  if (webhook?.status !== 'paused' || job.test === true || job.replay === true) return false
  return webhook.failed_at === undefined || job.created_at > Date.parse(webhook.failed_at)
}

/**
 * How long a held job waits in the job stream before it is looked at again; spread, so a resumed webhook's jobs do not
 * come as one wave.
 */
export const pausedWaitMs = (): number => Math.round(PAUSED_RECHECK_MS * (1 + Math.random() * 0.5))
