/**
 * How a test waits, in one of three ways, each named for what it waits for:
 *
 * - `eventually(check, what)`: until a condition holds (a message at the sink, an event seen, a port open). It is
 *   the one polling loop of the tests; the domain waiters that poll (EventWatcher.until, untilNothingPending,
 *   waitForPort) are built on it. The timeout only ends a test that is failing anyway; it is not what the test asserts, so it is
 *   generous and a loaded machine does not fail a passing test. `heldWithin` is the same wait for the few
 *   callers to whom running out of time is an outcome, not a failure.
 * - `nothingHappensFor(ms)`: through a window in which something must not happen (a second delivery, a repeated
 *   webhook). Absence cannot be awaited, so the window is part of the assertion; the test checks right after it
 *   that the thing did not happen.
 * - `sleepUntil(t)`: for a clock, when what the test needs is a time (a due time it set, a threshold of the
 *   engine's measured from something the test saw happen), not an event it could await.
 */

/** How long `eventually` waits by default before it gives up: 20 s. */
export const EVENTUALLY_TIMEOUT_MS = 20_000

/** How often `eventually` looks again by default: checks read memory or make one local request, so 25 ms is cheap. */
const EVENTUALLY_EVERY_MS = 25

/** Thrown by `eventually` when the condition did not hold in time. */
export class NotInTime extends Error {
  readonly code = 'E_NOT_IN_TIME'
  constructor (message: string) {
    super(message)
    this.name = 'NotInTime'
  }
}

/** What a check returns while its condition does not hold yet. */
type NotYet = false | undefined | null

/**
 * Calls `check` until it returns something other than `false`, `undefined` or `null`, and resolves with that
 * (so a check can return the thing it waited for). Throws after `timeoutMs`, naming `what`; a function for
 * `what` is called then, to describe what was seen instead.
 */
export async function eventually<T> (
  check: () => T | Promise<T>,
  what: string | (() => string),
  timeoutMs = EVENTUALLY_TIMEOUT_MS,
  everyMs = EVENTUALLY_EVERY_MS
): Promise<Exclude<T, NotYet>> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== false && value !== undefined && value !== null) return value as Exclude<T, NotYet>
    if (Date.now() > deadline) {
      throw new NotInTime(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/**
 * `eventually` for a wait whose running out of time is an outcome the caller handles (it falls back, or asserts
 * on what it saw): whether the condition held within `timeoutMs`. Any other error of `check` is thrown.
 */
export async function heldWithin (check: () => unknown, timeoutMs: number, everyMs = EVENTUALLY_EVERY_MS): Promise<boolean> {
  try {
    await eventually(check, 'the condition', timeoutMs, everyMs)
    return true
  } catch (err) {
    if (err instanceof NotInTime) return false
    throw err
  }
}

/**
 * Waits `ms`, a window in which something must not happen; the caller asserts right after it that it did not,
 * and says at the call what it is. Only for absence: anything that does happen is awaited with `eventually`.
 */
export async function nothingHappensFor (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}

/** Waits for a clock: until `t` (ms since the epoch), a time the test set or computed from what it saw. */
export async function sleepUntil (t: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, t - Date.now())))
}
