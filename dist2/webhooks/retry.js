/** Retries are spread by ±10 % so that endpoints coming back from an outage are not hit by one wave. */
export const RETRY_JITTER = 0.1;
/** Total attempts for a schedule: the immediate one plus one per scheduled delay. */
export function maxAttempts(scheduleS) {
    return scheduleS.length + 1;
}
/**
 * Milliseconds to wait before attempt `attempt + 1` after attempt `attempt` failed, or undefined when the
 * schedule is spent. `random` is in [0, 1).
 */
export function retryDelayMs(scheduleS, attempt, random = Math.random()) {
    const base = scheduleS[attempt - 1];
    if (base === undefined)
        return undefined;
    const factor = 1 - RETRY_JITTER + 2 * RETRY_JITTER * random;
    return Math.max(0, Math.round(base * 1000 * factor));
}
//# sourceMappingURL=retry.js.map