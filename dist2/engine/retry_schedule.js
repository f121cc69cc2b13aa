/**
 * When a deferred recipient is tried again, and when it gives up. Pure.
 *
 * A recipient's n-th real attempt that ends deferred waits `schedule[n-1]` seconds. It gives up (`bounced`,
 * `soft`) by age, not by count: at the first real attempt, or the first turn after one, that comes when the
 * schedule's whole span has passed since the message became due: since it was accepted, or for a scheduled send
 * since the time it was due (its last reschedule's time, else its `scheduled_at`), so a reschedule never uses
 * up attempts. A turn spent waiting for a suspended destination is no attempt, so a
 * suspension delays a recipient's attempts without using them up; it cannot bounce a recipient never tried.
 * Without suspensions this is the count rule: the turn after the last step comes at the span.
 */
/** A recipient is due this much before its time (timers and nak delays are not exact to the millisecond). */
export const DUE_EARLY_MS = 50;
/**
 * Epoch ms from which on a deferred recipient gives up. `dueAtMs`: when the schedule state says a scheduled message
 * became due (a reschedule's time, which the queued message cannot carry); without it, its `scheduled_at`.
 */
export function giveUpAt(msg, scheduleS, dueAtMs) {
    const accepted = Date.parse(msg.created_at);
    const due = dueAtMs ?? (msg.scheduled_at !== undefined ? Date.parse(msg.scheduled_at) : Number.NaN);
    const start = Math.max(Number.isNaN(accepted) ? 0 : accepted, Number.isNaN(due) ? 0 : due);
    return start + scheduleS.reduce((sum, s) => sum + s, 0) * 1000;
}
/** Whether an outcome at `atMs` comes once the span has passed. */
export function spanPassed(atMs, giveUpAtMs) {
    return atMs + DUE_EARLY_MS >= giveUpAtMs;
}
/** The next attempt after the `attempt`-th real attempt (1-based) ended deferred at `atMs`. */
export function nextAttemptAt(atMs, attempt, scheduleS) {
    const step = scheduleS[Math.min(attempt, scheduleS.length) - 1] ?? 0;
    return atMs + step * 1000;
}
//# sourceMappingURL=retry_schedule.js.map