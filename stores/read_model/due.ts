import type { MessageStatus } from '../../protocol/mod.ts'

/**
 * How long past its due time a waiting message may go without an attempt before it reads as stuck. 5 minutes:
 * an attempt that is due is started within the engine's work-queue sweep (OB_ENGINE_SWEEP_MS, 60 s) or a
 * redelivery after the consumer's ack wait (OB_ENGINE_ACK_WAIT_MS, 60 s), and a shard held by a stopped engine is
 * taken over within its lease (OB_SHARD_LEASE_MS, 10 s); five minutes leave room for all of them at once and a
 * backlog, so a message flagged is most often one no engine is working on.
 */
export const DEFAULT_STUCK_AFTER_MS = 5 * 60_000

/** Statuses in which a message waits for its next delivery attempt (and is in the due index). */
export function waitsForAttempt (status: MessageStatus): boolean {
  return status === 'queued' || status === 'scheduled' || status === 'deferred'
}

export interface AttemptTiming {
  /** When the next delivery attempt is (or was) due; absent when none is waited for. */
  next_attempt_at?: string
  /** The next attempt is overdue by more than the grace: no engine is delivering the message. */
  stuck: boolean
}

/**
 * Worked out at read time, never stored: a queued or scheduled message is due at its scheduled time (else when it
 * was sent), a deferred one at the `next_attempt_at` of its latest deferral (`nextMs`).
 */
export function attemptTiming (m: { status: MessageStatus, created_at: string, scheduled_at?: string }, nextMs: number | undefined, now: number, graceMs: number): AttemptTiming {
  let due: number | undefined
  if (m.status === 'deferred') due = nextMs
  else if (m.status === 'queued' || m.status === 'scheduled') due = Date.parse(m.scheduled_at ?? m.created_at)
  if (due === undefined || !Number.isFinite(due)) return { stuck: false }
  return { next_attempt_at: new Date(due).toISOString(), stuck: now - due > graceMs }
}
