import { OutboxApiError } from './errors.ts'

/** How failed calls are retried. */
export interface RetryPolicy {
  /** Attempts in all, the first included. Default 4; 1 disables retries. */
  maxAttempts: number
  /** First backoff step in ms; doubles with each attempt. Default 500. */
  baseDelayMs: number
  /** Cap of one backoff step in ms. Default 20 000. */
  maxDelayMs: number
  /**
   * Longest wait a server may ask for (`retry_after`) that the client still honours, in ms. A longer one is not
   * waited out: the OutboxApiError is thrown with its `retryAfter`. Default 60 000.
   */
  maxRetryAfterMs: number
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 500, maxDelayMs: 20_000, maxRetryAfterMs: 60_000 }

/** The seed's retry guidance: 429 and 500/502/503/504 are retried; 400, 401, 403, 404 (and other 4xx) never. */
export const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504])

/**
 * Milliseconds to wait before the next attempt, or undefined when the error must be thrown.
 * `retry_after` wins when the server gives it; otherwise exponential backoff with "equal jitter"
 * (half the step fixed, half random) so that many clients do not retry in lock-step.
 */
export function retryDelay (
  err: unknown, attempt: number, policy: RetryPolicy, canRetryNetwork: boolean, random = Math.random
): number | undefined {
  if (attempt >= policy.maxAttempts) return undefined
  if (err instanceof OutboxApiError) {
    if (!RETRYABLE_STATUS.has(err.status)) return undefined
    if (err.retryAfter !== undefined) {
      const ms = err.retryAfter * 1000
      return ms > policy.maxRetryAfterMs ? undefined : ms
    }
  } else if (!canRetryNetwork) {
    return undefined
  }
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  return Math.round(step / 2 + random() * step / 2)
}

export function sleep (ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) { reject(signal.reason); return }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    function onAbort (): void { clearTimeout(timer); reject(signal!.reason) }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
