/**
 * The two ways a test waits for something asynchronous:
 *
 * - `eventually(check, what)`: until a condition holds (a message at the sink, an event seen, a port open). The
 *   timeout only ends a test that is failing anyway; it is not what the test asserts, so it is generous and a
 *   loaded machine does not fail a passing test.
 * - `nothingHappensFor(ms)`: through a window in which something must not happen (a second delivery, a repeated
 *   webhook). Absence cannot be awaited, so the window is part of the assertion; the test checks right after it
 *   that the thing did not happen.
 *
 * A wait for a clock (a scheduled time, a retry falling due) is neither: it sleeps until that time and says so.
 */

/** How long `eventually` waits by default before it gives up: 20 s. */
export const EVENTUALLY_TIMEOUT_MS = 20_000

/** How often `eventually` looks again by default: checks read memory or make one local request, so 25 ms is cheap. */
const EVENTUALLY_EVERY_MS = 25

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
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/**
 * Waits `ms`, a window in which something must not happen; the caller asserts right after it that it did not,
 * and says at the call what it is. Only for absence: anything that does happen is awaited with `eventually`.
 */
export async function nothingHappensFor (ms: number): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, ms))
}
