import type { MessageStatus } from '../../protocol/mod.ts'

/**
 * How long past its due time a waiting message may go without an attempt before it reads as stuck. 5 minutes:
 * an attempt that is due is started within the engine's work-queue sweep (OB_ENGINE_SWEEP_MS, 60 s) or a
 * redelivery after the consumer's ack wait (OB_ENGINE_ACK_WAIT_MS, 60 s), and a shard held by a stopped engine is
 * taken over within its lease (OB_SHARD_LEASE_MS, 10 s); five minutes leave room for all of them at once and a
 * backlog, so a message flagged is most often one no engine is working on.
 */
export const DEFAULT_STUCK_AFTER_MS = 5 * 60_000

/**
 * Whether a message waits for a delivery attempt: queued or scheduled, `sending` (some recipients delivered, the rest
 * not attempted yet), or any status while one of its recipients is deferred (one recipient bounced and another
 * greylisted reads `bounced`, yet the greylisted one still waits for its retry). apply_event.lua and
 * record_queued.lua keep the due index by the same rule.
 */
export function waitsForAttempt (status: MessageStatus, deferredRecipients: number): boolean {
  return deferredRecipients > 0 || status === 'queued' || status === 'scheduled' || status === 'sending' || status === 'deferred'
}

export interface AttemptTiming {
  /** When the next delivery attempt is (or was) due; absent when none is waited for. */
  next_attempt_at?: string
  /** The next attempt is overdue by more than the grace: no engine is delivering the message. */
  stuck: boolean
}

/**
 * Worked out at read time, never stored: a waiting message is due at the `next_attempt_at` of its latest deferral
 * (`nextMs`), else at its scheduled time, else when it was sent.
 */
export function attemptTiming (
  m: { status: MessageStatus, created_at: string, scheduled_at?: string },
  deferredRecipients: number, nextMs: number | undefined, now: number, graceMs: number
): AttemptTiming {
  if (!waitsForAttempt(m.status, deferredRecipients)) return { stuck: false }
  const due = nextMs !== undefined && Number.isFinite(nextMs) ? nextMs : Date.parse(m.scheduled_at ?? m.created_at)
  if (!Number.isFinite(due)) return { stuck: false }
  return { next_attempt_at: new Date(due).toISOString(), stuck: now - due > graceMs }
}
