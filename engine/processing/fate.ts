/**
 * What the dispatcher does with the JetStream message afterwards. `ack`: the message is done with (every recipient
 * has its final outcome and its event, or it was canceled). `drop`: this copy is acknowledged, but the message goes
 * on in another copy (a rescheduled message has several); nothing that belongs to the message may be removed.
 * There is no termination: a message ends with an event for every recipient, then its acknowledgement.
 */
export type Fate = { kind: 'ack' } | { kind: 'drop' } | { kind: 'nak', delayMs: number }

/** Long waits are taken in steps of at most an hour, so a changed schedule or a moved shard takes effect within the hour. */
export const MAX_NAK_MS = 3600_000 // 1 h

/** Redis unreachable: try the message again in 5 s, nothing was sent. */
export const STATE_RETRY_MS = 5_000

/** Hands the message back for `delayMs`, rounded up to whole milliseconds and held within 0..MAX_NAK_MS. */
export function nak (delayMs: number): Fate {
  return { kind: 'nak', delayMs: Math.max(0, Math.min(MAX_NAK_MS, Math.ceil(delayMs))) }
}
