/** Long waits are taken in steps of at most an hour, so a changed schedule or a moved shard takes effect within the hour. */
export const MAX_NAK_MS = 3600_000; // 1 h
/** Redis unreachable: try the message again in 5 s, nothing was sent. */
export const STATE_RETRY_MS = 5_000;
/** Hands the message back for `delayMs`, rounded up to whole milliseconds and held within 0..MAX_NAK_MS. */
export function nak(delayMs) {
    return { kind: 'nak', delayMs: Math.max(0, Math.min(MAX_NAK_MS, Math.ceil(delayMs))) };
}
//# sourceMappingURL=fate.js.map